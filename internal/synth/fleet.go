package synth

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// fleetRegions and fleetStages vary the directories of a generated fleet:
// clusters/<region>/<stage>-<n>, as a platform team names them.
var (
	fleetRegions = []string{"us-east-1", "eu-west-2", "ap-southeast-1", "sa-east-1", "eu-central-1"}
	fleetStages  = []string{"prod-payments", "prod-edge", "staging-web", "dev-batch", "prod-data-plane", "qa"}
)

// FleetCluster returns the directory of the i-th cluster of a fleet,
// slash-separated: clusters/<region>/<stage>-<n>.
func FleetCluster(i int) string {
	return path.Join("clusters", fleetRegions[i%len(fleetRegions)],
		fmt.Sprintf("%s-%04d", fleetStages[(i/len(fleetRegions))%len(fleetStages)], i))
}

// WriteFleet writes a monorepo of clusters under dir: each cluster
// (FleetCluster) a copy of every package of packages, by name - a map from
// the package's directory in the cluster to the directory it is copied
// from (a package as the examples hold one: a policy, its objects, a
// kustomization, a Kptfile).
func WriteFleet(dir string, clusters int, packages map[string]string) error {
	sources := map[string]fs.FS{}
	for name, src := range packages {
		sources[name] = os.DirFS(src)
	}
	for i := range clusters {
		for name, src := range sources {
			if err := os.CopyFS(filepath.Join(dir, filepath.FromSlash(FleetCluster(i)), name), src); err != nil {
				return err
			}
		}
	}
	return nil
}

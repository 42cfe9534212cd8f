package restart

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rotate-certs/rotate-certs/fn/kube"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func mustParse(t *testing.T, s string) *yaml.RNode {
	t.Helper()
	n, err := yaml.Parse(s)
	require.NoError(t, err)
	return n
}

const fullDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ratelimit
  namespace: gw
  annotations:
    rotate-certs.dev/reload: hot
spec:
  replicas: 2
  paused: true
  template:
    metadata:
      labels: {app: ratelimit}
    spec:
      initContainers:
      - name: init
        envFrom:
        - secretRef: {name: init-env}
        - configMapRef: {name: init-cm}
      containers:
      - name: main
        env:
        - name: CA
          valueFrom:
            secretKeyRef: {name: trust, key: ca.crt}
        - name: BUNDLE
          valueFrom:
            configMapKeyRef: {name: bundle, key: ca-bundle.crt}
        - name: PLAIN
          value: x
        volumeMounts:
        - {name: ca, mountPath: /etc/ca}
        - {name: proj, mountPath: /etc/proj/ca.crt, subPath: ca.crt}
        - {name: expr, mountPath: /etc/expr, subPathExpr: $(POD)}
      volumes:
      - name: ca
        secret: {secretName: trust}
      - name: proj
        projected:
          sources:
          - secret: {name: trust}
          - configMap: {name: bundle}
          - serviceAccountToken: {path: token}
      - name: expr
        configMap: {name: bundle}
      - name: scratch
        emptyDir: {}
`

func TestReadDeployment(t *testing.T) {
	w, err := readNode(mustParse(t, fullDeployment))
	require.NoError(t, err)
	assert.True(t, w.rollable)
	assert.Equal(t, reloadHot, w.reload)
	assert.Equal(t, "spec.template", w.templateField)
	secret := func(n string) Object { return Object{kind: "Secret", name: n} }
	cm := func(n string) Object { return Object{kind: "ConfigMap", name: n} }
	const s = "spec.template.spec."
	assert.Equal(t, []Use{
		{Object: secret("init-env"), Via: ViaEnvFrom, Field: s + "initContainers[0].envFrom[0].secretRef"},
		{Object: cm("init-cm"), Via: ViaEnvFrom, Field: s + "initContainers[0].envFrom[1].configMapRef"},
		{Object: secret("trust"), Via: ViaEnv, Field: s + "containers[0].env[0].valueFrom.secretKeyRef"},
		{Object: cm("bundle"), Via: ViaEnv, Field: s + "containers[0].env[1].valueFrom.configMapKeyRef"},
		{Object: secret("trust"), Via: ViaVolume, Field: s + "containers[0].volumeMounts[0]"},
		{Object: secret("trust"), Via: ViaSubPath, Field: s + "containers[0].volumeMounts[1].subPath"},
		{Object: cm("bundle"), Via: ViaSubPath, Field: s + "containers[0].volumeMounts[1].subPath"},
		{Object: cm("bundle"), Via: ViaSubPath, Field: s + "containers[0].volumeMounts[2].subPathExpr"},
	}, w.Model.uses())
	assert.Equal(t, shape{kind: rowOf("Deployment"), replicas: ptr(int64(2)), replicasSet: true, paused: true,
		podLabels: map[string]string{"app": "ratelimit"}}, w.shape)
}

func ptr[T any](v T) *T { return &v }

func TestReadKinds(t *testing.T) {
	cases := []struct {
		name     string
		doc      string
		workload bool
		rollable bool
		template string
		refRoll  bool
	}{
		{"StatefulSet", "apiVersion: apps/v1\nkind: StatefulSet\nspec: {template: {spec: {containers: []}}}", true, true, "spec.template", false},
		{"DaemonSet", "apiVersion: apps/v1\nkind: DaemonSet\nspec: {template: {spec: {containers: []}}}", true, true, "spec.template", false},
		{"Rollout", "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec: {template: {spec: {containers: []}}}", true, true, "spec.template", false},
		{"Rollout with workloadRef", "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec: {workloadRef: {kind: Deployment, name: x}}", true, true, "spec.template", true},
		{"Job", "apiVersion: batch/v1\nkind: Job\nspec: {template: {spec: {containers: []}}}", true, false, "spec.template", false},
		{"CronJob", "apiVersion: batch/v1\nkind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: {containers: []}}}}}", true, false, "spec.jobTemplate.spec.template", false},
		{"old Deployment API", "apiVersion: extensions/v1beta1\nkind: Deployment\nspec: {template: {spec: {}}}", false, false, "", false},
		{"Rollout of another group", "apiVersion: example.com/v1\nkind: Rollout\nspec: {}", false, false, "", false},
		{"Pod", "apiVersion: v1\nkind: Pod\nspec: {containers: []}", false, false, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := mustParse(t, tc.doc)
			require.Equal(t, tc.workload, isWorkload(n))
			if !tc.workload {
				return
			}
			w, err := readNode(n)
			require.NoError(t, err)
			assert.Equal(t, tc.rollable, w.rollable)
			assert.Equal(t, tc.template, w.templateField)
			assert.Equal(t, tc.refRoll, w.workloadRef)
		})
	}
}

// TestReadTemplateKinds: the kinds init lists as readers of a CA are the
// restart rules' kinds plus ReplicaSet, ReplicationController and Pod, at
// the same API versions.
func TestReadTemplateKinds(t *testing.T) {
	const volume = "{volumes: [{name: ca, secret: {secretName: trust}}]}"
	cases := []struct {
		name, doc        string
		reader, workload bool
		field            string
	}{
		{"Deployment", "apiVersion: apps/v1\nkind: Deployment\nspec: {template: {spec: " + volume + "}}", true, true, "spec.template.spec.volumes[0].secret"},
		{"CronJob", "apiVersion: batch/v1beta1\nkind: CronJob\nspec: {jobTemplate: {spec: {template: {spec: " + volume + "}}}}", true, true, "spec.jobTemplate.spec.template.spec.volumes[0].secret"},
		{"ReplicaSet", "apiVersion: apps/v1\nkind: ReplicaSet\nspec: {template: {spec: " + volume + "}}", true, false, "spec.template.spec.volumes[0].secret"},
		{"Pod", "apiVersion: v1\nkind: Pod\nspec: " + volume, true, false, "spec.volumes[0].secret"},
		{"ReplicationController", "apiVersion: v1\nkind: ReplicationController\nspec: {template: {spec: " + volume + "}}", true, false, "spec.template.spec.volumes[0].secret"},
		{"old Deployment API", "apiVersion: extensions/v1beta1\nkind: Deployment\nspec: {template: {spec: " + volume + "}}", false, false, ""},
		{"old ReplicaSet API", "apiVersion: extensions/v1beta1\nkind: ReplicaSet\nspec: {template: {spec: " + volume + "}}", false, false, ""},
		{"Service", "apiVersion: v1\nkind: Service\nspec: {}", false, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := mustParse(t, tc.doc)
			require.Equal(t, tc.reader, isReader(n))
			assert.Equal(t, tc.workload, isWorkload(n))
			if !tc.reader {
				return
			}
			tmpl, err := readTemplateOf(n)
			require.NoError(t, err)
			assert.Equal(t, []Use{{Object: Object{kind: "Secret", name: "trust"}, Via: ViaVolume, Field: tc.field}}, tmpl.uses())
		})
	}
}

// TestReadTemplateNamesEachReference: what init shows of a read, the
// variable of an env reference and whether a volume source is projected.
func TestReadTemplateNamesEachReference(t *testing.T) {
	tmpl, err := readTemplateOf(mustParse(t, fullDeployment))
	require.NoError(t, err)
	var vols []string
	for _, v := range tmpl.Volumes {
		for _, s := range v.Sources {
			vols = append(vols, fmt.Sprintf("%s %s/%s projected=%v", v.Name, s.kind, s.name, s.Projected))
		}
	}
	assert.Equal(t, []string{"ca Secret/trust projected=false", "proj Secret/trust projected=true", "proj ConfigMap/bundle projected=true", "expr ConfigMap/bundle projected=false"}, vols)
	require.Len(t, tmpl.Containers, 2)
	var vars []string
	for _, r := range tmpl.Containers[1].Env {
		vars = append(vars, r.Var+"="+r.kind+"/"+r.name)
	}
	assert.Equal(t, []string{"CA=Secret/trust", "BUNDLE=ConfigMap/bundle"}, vars)
}

// TestReadTemplateErrorsAsRead: a malformed pod template is the same
// field error for init's reading as for the restart rules'; the reload
// annotation is the restart rules' alone.
func TestReadTemplateErrorsAsRead(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {volumes: {a: b}}}}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {metadata: {labels: [a]}, spec: {containers: []}}}",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 1}",
	} {
		_, readErr := readNode(mustParse(t, doc))
		_, tmplErr := readTemplateOf(mustParse(t, doc))
		require.Error(t, readErr)
		assert.Equal(t, readErr, tmplErr)
	}
	_, err := readTemplateOf(mustParse(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, envFrom: x}]}"))
	assert.Equal(t, &kube.FieldError{Field: "spec.containers[0].envFrom", Err: errors.New("must be a list")}, err)
	_, err = readTemplateOf(mustParse(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: null"))
	assert.EqualError(t, err, "spec: has no pod spec: rotate-certs cannot tell what it reads")
	_, err = readTemplateOf(mustParse(t, "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, annotations: {rotate-certs.dev/reload: warm}}\nspec: {template: {spec: {containers: []}}}"))
	assert.NoError(t, err)
	tmpl, err := readTemplateOf(mustParse(t, "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nspec: {workloadRef: {kind: Deployment, name: x}}"))
	assert.NoError(t, err)
	assert.Empty(t, tmpl.uses())
}

func TestReadErrors(t *testing.T) {
	cases := []struct {
		name  string
		doc   string
		field string
		msg   string
	}{
		{"unknown reload value", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, annotations: {rotate-certs.dev/reload: warm}}\nspec: {template: {spec: {containers: []}}}",
			"metadata.annotations.rotate-certs.dev/reload", `"warm" is not a reload class`},
		{"no template", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {replicas: 1}",
			"spec.template", "has no pod template"},
		{"template without spec", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec: {template: {metadata: {labels: {a: b}}}}",
			"spec.template", "has no pod template"},
		{"null template", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec: {template: null}",
			"spec.template", "has no pod template"},
		{"CronJob without job template", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: x}\nspec: {schedule: '* * * * *'}",
			"spec.jobTemplate.spec.template", "has no pod template"},
		{"volumes not a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {volumes: {a: b}}}}",
			"spec.template.spec.volumes", "must be a list"},
		{"env not a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {spec: {containers: [{name: c, env: x}]}}}",
			"spec.template.spec.containers[0].env", "must be a list"},
		// Found by FuzzProcess: kyaml's accessors panicked on these.
		{"template labels a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {metadata: {labels: [a]}, spec: {containers: []}}}",
			"spec.template.metadata.labels", "is a YAML list, not a map of strings"},
		{"template metadata a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {metadata: [a], spec: {containers: []}}}",
			"spec.template.metadata", "is a YAML list, not an object"},
		{"template annotations a list", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec: {template: {metadata: {annotations: [a]}, spec: {containers: []}}}",
			"spec.template.metadata.annotations", "is a YAML list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readNode(mustParse(t, tc.doc))
			var fe *kube.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, fe.Err.Error(), tc.msg)
		})
	}
}

func TestSetTrustHashEditsOnlyTheAnnotation(t *testing.T) {
	const doc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ratelimit # the rate-limit server
  namespace: gw
spec:
  replicas: 2
  template:
    metadata:
      labels:
        app: ratelimit
      annotations:
        prometheus.io/scrape: "true" # keep quoting
    spec:
      containers:
      - name: main
        image: "envoyproxy/ratelimit:v1" # pinned
`
	n := mustParse(t, doc)
	w, err := readNode(n)
	require.NoError(t, err)
	_, has := w.trustHash()
	require.False(t, has)

	changed, err := w.setTrustHash("sha256:aa")
	require.NoError(t, err)
	require.True(t, changed)
	want := strings.Replace(doc, `        prometheus.io/scrape: "true" # keep quoting
`, `        prometheus.io/scrape: "true" # keep quoting
        rotate-certs.dev/trust-hash: 'sha256:aa'
`, 1)
	assert.Equal(t, want, n.MustString())

	got, has := w.trustHash()
	assert.True(t, has)
	assert.Equal(t, "sha256:aa", got)

	changed, err = w.setTrustHash("sha256:aa")
	require.NoError(t, err)
	assert.False(t, changed, "the same hash must not count as a change")
	assert.Equal(t, want, n.MustString())

	changed, err = w.setTrustHash("sha256:bb")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, strings.Replace(want, "sha256:aa", "sha256:bb", 1), n.MustString())
}

func TestSetTrustHashKeepsComments(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: gw}\nspec:\n  template:\n    # the pod\n"
	const tail = "    spec:\n      containers: [{name: main}]\n"
	tests := []struct {
		name     string
		metadata string
		want     string
	}{
		{"a stale hash keeps its comment and quoting",
			"    metadata:\n      annotations:\n        rotate-certs.dev/trust-hash: \"sha256:old\" # last rotation\n",
			"    metadata:\n      annotations:\n        rotate-certs.dev/trust-hash: \"sha256:new\" # last rotation\n"},
		{"null annotations are filled where they are, with their comment",
			"    metadata:\n      annotations: null   # nothing yet\n      labels: {app: a}\n",
			"    metadata:\n      annotations: # nothing yet\n        rotate-certs.dev/trust-hash: 'sha256:new'\n      labels: {app: a}\n"},
		{"empty flow annotations become a block where they are",
			"    metadata:\n      annotations: {}\n      labels: {app: a}\n",
			"    metadata:\n      annotations:\n        rotate-certs.dev/trust-hash: 'sha256:new'\n      labels: {app: a}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustParse(t, head+tt.metadata+tail)
			w, err := readNode(n)
			require.NoError(t, err)
			changed, err := w.setTrustHash("sha256:new")
			require.NoError(t, err)
			require.True(t, changed)
			assert.Equal(t, head+tt.want+tail, n.MustString())
		})
	}
}

// TestReadBooleansAsKubectl: spec.paused and hostNetwork read as kubectl
// reads YAML (True, yes, on are booleans), not only as the word true.
func TestReadBooleansAsKubectl(t *testing.T) {
	for _, yes := range []string{"true", "True", "yes", "on"} {
		doc := `apiVersion: apps/v1
kind: Deployment
metadata: {name: a, namespace: gw}
spec:
  paused: ` + yes + `
  template:
    spec:
      hostNetwork: ` + yes + `
      containers: [{name: c}]
`
		w, err := readNode(mustParse(t, doc))
		require.NoError(t, err)
		assert.True(t, w.shape.paused, yes)
		assert.True(t, w.pod.hostNetwork, yes)
	}
}

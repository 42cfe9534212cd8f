//go:build devtools

package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rotate-certs/rotate-certs/internal/synth"
	"github.com/rotate-certs/rotate-certs/internal/testpki"
)

// policyHead is a ResourceList head with a one-bundle policy; the source
// Secret is the first item.
func policyHead() string {
	ca := testpki.NewCA("bench-ca", testpki.Date(2026, 1, 1), testpki.Days(3650))
	return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" +
		"  apiVersion: rotate-certs.dev/v1alpha1\n  kind: RotationPolicy\n  metadata:\n    name: bench\n" +
		"  spec:\n    now: \"2026-11-22T00:00:00Z\"\n    trustBundles:\n    - name: b\n" +
		"      sources:\n      - secret: {name: ca, namespace: ns}\n      target: {name: trust}\nitems:\n" +
		"- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: ca\n    namespace: ns\n  data:\n    ca.crt: " +
		b64(ca.PEM()) + "\n"
}

// worstShape is an input shape for the memory section: item(i) returns the
// i-th item's text.
type worstShape struct {
	name string
	item func(i int) string
}

func worstShapes() []worstShape {
	pem := b64(testpki.NewCA("bench-leaf-ca", testpki.Date(2026, 1, 1), testpki.Days(3650)).PEM())
	var nested, wide, annos strings.Builder
	for d := 0; d < 60; d++ {
		nested.WriteString("{a: ")
	}
	nested.WriteString("1" + strings.Repeat("}", 60))
	wide.WriteString("{")
	for k := 0; k < 2000; k++ {
		fmt.Fprintf(&wide, "k%d: 1, ", k)
	}
	wide.WriteString("z: 1}")
	for k := 0; k < 200; k++ {
		fmt.Fprintf(&annos, "      example.com/note-%d: x\n", k)
	}
	long := strings.Repeat("abcdefgh", 1<<17) // 1 MiB on one line
	return []worstShape{
		{"empty items: - {}", func(int) string { return "- {}\n" }},
		{"tiny items of kinds no step reads", func(i int) string { return fmt.Sprintf("- {kind: Service, metadata: {name: s%d}}\n", i) }},
		{"tiny items a step reads (PodDisruptionBudgets)", func(i int) string {
			return fmt.Sprintf("- apiVersion: policy/v1\n  kind: PodDisruptionBudget\n  metadata:\n    name: p%d\n", i)
		}},
		{"tiny items no step reads (Namespaces)", func(i int) string {
			return fmt.Sprintf("- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: n%d\n", i)
		}},
		{"flow maps nested 60 deep in workloads", func(i int) string {
			return fmt.Sprintf("- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: d%d\n  spec: %s\n", i, nested.String())
		}},
		{"wide flow maps in workloads", func(i int) string {
			return fmt.Sprintf("- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: d%d\n  spec: %s\n", i, wide.String())
		}},
		{"long lines (1 MiB values, no certificate)", func(i int) string {
			return fmt.Sprintf("- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c%d\n  data:\n    blob: %s\n", i, long)
		}},
		{"many annotations on Secrets with a certificate", func(i int) string {
			return fmt.Sprintf("- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: s%d\n    annotations:\n%s  data:\n    ca.crt: %s\n", i, annos.String(), pem)
		}},
	}
}

// memory prints peak RSS over input size for the worst shapes.
func (c *config) memory(target int) {
	fmt.Println("== Memory: peak RSS over input size, function mode, on the worst shapes found")
	fmt.Printf("(about %d MB each; exit 1 is a refusal that says why: the items a step reads hold more YAML than rotate-certs keeps for the input's size)\n", target>>20)
	fmt.Printf("%-48s %8s %8s | %8s %9s %7s %5s\n", "shape", "items", "size", "CPU", "RSS", "RSS/in", "exit")
	head := policyHead()
	for _, w := range worstShapes() {
		var b bytes.Buffer
		b.WriteString(head)
		n := 0
		for b.Len() < target {
			b.WriteString(w.item(n))
			n++
		}
		input := filepath.Join(c.dir, "worst.yaml")
		write(input, b.Bytes())
		c.memoryRow(w.name, n, input)
	}
	// kyaml's reader, for lists not in the layout kpt and kustomize write.
	list := synth.ResourceList(synth.Options{Resources: 60000, Bundles: 100, Seed: 1})
	at := bytes.Index(list, []byte("\nitems:\n")) + len("\nitems:\n")
	indented := append(list[:at:at], "  "...)
	indented = append(indented, bytes.ReplaceAll(list[at:len(list)-1], []byte("\n"), []byte("\n  "))...)
	indented = append(indented, '\n')
	input := filepath.Join(c.dir, "worst.yaml")
	write(input, indented)
	c.memoryRow("items indented: kyaml's reader (capped at 32 MiB)", 60000, input)
	os.Remove(input)
}

func (c *config) memoryRow(name string, n int, input string) {
	all := measure(c.runs, c.withBase([]func() sample{func() sample { return c.run(input, "", true, c.rc) }},
		func(bin string) sample { return c.run(input, "", true, bin) })...)
	s, in := all[0], size(input)
	fmt.Printf("%-48s %8d %7.1fM | %7.2fs %8.0fM %6.1fx %5d%s\n", name, n, float64(in)/1e6, s.cpu.Seconds(), s.mb(), float64(s.rss)/float64(in), s.code,
		c.vsBase("memory "+name, s, all))
}

// repo renders and checks a package of files, next to kpt fn render with a
// no-op exec function.
func (c *config) repo(n, kptN int) {
	fmt.Println("== Repository scale: rotate-certs render and check on a package of files (10 resources per file), kpt fn render with a no-op exec function")
	noop := filepath.Join(c.dir, "noop-fn.sh")
	write(noop, []byte("#!/bin/sh\nexec cat\n"))
	if err := os.Chmod(noop, 0o755); err != nil {
		fail(err)
	}
	fmt.Printf("%-44s %8s %6s %8s | %8s %9s\n", "run", "items", "files", "size", "CPU", "RSS")
	sizes := []int{n}
	if kptN != n {
		sizes = []int{kptN, n}
	}
	var renderAt, kptAt = map[int]sample{}, map[int]sample{}
	for _, m := range sizes {
		o := synth.Options{Resources: m, Bundles: 100, Seed: 1, Shape: synth.KptRender, Exec: noop}
		pristine := filepath.Join(c.dir, fmt.Sprintf("pkg-%d", m))
		if err := synth.WritePackage(pristine, o); err != nil {
			fail(err)
		}
		files, bytes := treeSize(pristine)
		work := filepath.Join(c.dir, "work")
		fresh := func() {
			os.RemoveAll(work)
			if out, err := exec.Command("cp", "-a", pristine, work).CombinedOutput(); err != nil {
				fail(fmt.Errorf("cp: %v: %s", err, out))
			}
		}
		render := func(bin string) sample {
			fresh()
			return c.run("", "", false, bin, "render", work, "--policy", filepath.Join(work, "policy.yaml"))
		}
		programs := []func() sample{func() sample { return render(c.rc) }}
		withKpt := m == kptN && c.kpt != ""
		if _, err := exec.LookPath(c.kpt); err != nil {
			withKpt = false
		}
		if withKpt {
			programs = append(programs, func() sample {
				fresh()
				return c.run("", "", false, c.kpt, "fn", "render", work, "--allow-exec")
			})
		}
		s := measure(c.runs, c.withBase(programs, render)...)
		renderAt[m] = s[0]
		row := func(label string, x sample, all []sample) {
			fmt.Printf("%-44s %8d %6d %7.1fM | %7.2fs %8.0fM%s\n", label, m, files, float64(bytes)/1e6, x.cpu.Seconds(), x.mb(),
				c.vsBase(fmt.Sprintf("repo %s %d", label, m), x, all))
		}
		row("rotate-certs render (first render)", s[0], s)
		if withKpt {
			kptAt[m] = s[1]
			fmt.Printf("%-44s %8d %6d %7.1fM | %7.2fs %8.0fM\n", "kpt fn render, no-op exec function", m, files, float64(bytes)/1e6, s[1].cpu.Seconds(), s[1].mb())
		}
		fresh()
		c.run("", "", false, c.rc, "render", work, "--policy", filepath.Join(work, "policy.yaml"))
		rerender := func(bin string) sample {
			return c.run("", "", false, bin, "render", work, "--policy", filepath.Join(work, "policy.yaml"))
		}
		again := measure(c.runs, c.withBase([]func() sample{func() sample { return rerender(c.rc) }}, rerender)...)
		row("rotate-certs render (re-render, nothing to write)", again[0], again)
		check := func(bin string) sample { return c.run("", "", true, bin, "check", work) }
		checked := measure(c.runs, c.withBase([]func() sample{func() sample { return check(c.rc) }}, check)...)
		row("rotate-certs check", checked[0], checked)
		os.RemoveAll(work)
		os.RemoveAll(pristine)
	}
	if k, ok := kptAt[kptN]; ok {
		r := renderAt[kptN]
		fmt.Printf("at %d resources rotate-certs render took %.2fx kpt fn render's CPU time with a function that does nothing\n", kptN, r.cpu.Seconds()/k.cpu.Seconds())
		if kptN != n {
			big := renderAt[n]
			fmt.Printf("at %d resources render took %.2fs; kpt, if it grew only linearly from %d, would take %.0fs (%.2fx)\n",
				n, big.cpu.Seconds(), kptN, k.cpu.Seconds()*float64(n)/float64(kptN), big.cpu.Seconds()/(k.cpu.Seconds()*float64(n)/float64(kptN)))
		}
	}
}

func treeSize(dir string) (files int, size int64) {
	err := filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			files++
			size += info.Size()
		}
		return err
	})
	if err != nil {
		fail(err)
	}
	return files, size
}

// kustomizeOverhead measures kustomize build without a function, with a
// no-op exec function and with rotate-certs.
func (c *config) kustomizeOverhead(sizes []int) {
	fmt.Println("== kustomize build on a package of files (10 resources per file): without a function, with a no-op exec function, with rotate-certs")
	if _, err := exec.LookPath(c.kustomize); err != nil {
		fmt.Printf("skipped: %s not found (make tools installs it)\n", c.kustomize)
		return
	}
	noop := filepath.Join(c.dir, "noop-fn.sh")
	write(noop, []byte("#!/bin/sh\nexec cat\n"))
	if err := os.Chmod(noop, 0o755); err != nil {
		fail(err)
	}
	rc, err := filepath.Abs(c.rc)
	if err != nil {
		fail(err)
	}
	fmt.Printf("%7s | %17s | %17s | %17s | %9s %9s\n", "items", "no function", "no-op exec fn", "rotate-certs", "fn cost", "rc cost")
	fmt.Printf("%7s | %7s %9s | %7s %9s | %7s %9s | %9s %9s\n", "", "CPU", "RSS", "CPU", "RSS", "CPU", "RSS", "", "")
	for _, n := range sizes {
		pkg := func(name, exec string, transformer bool) string {
			d := filepath.Join(c.dir, name)
			if err := synth.WritePackage(d, synth.Options{Resources: n, Bundles: 100, Seed: 1, Shape: synth.Kustomize, Exec: exec}); err != nil {
				fail(err)
			}
			if !transformer {
				k := filepath.Join(d, "kustomization.yaml")
				b, err := os.ReadFile(k)
				if err != nil {
					fail(err)
				}
				write(k, b[:bytes.Index(b, []byte("transformers:"))])
			}
			return d
		}
		plain, withNoop, withRC := pkg("kz-none", noop, false), pkg("kz-noop", noop, true), pkg("kz-rc", rc, true)
		build := func(d string, fn bool) func() sample {
			return func() sample {
				if fn {
					return c.run("", "", false, c.kustomize, "build", "--enable-alpha-plugins", "--enable-exec", d)
				}
				return c.run("", "", false, c.kustomize, "build", d)
			}
		}
		dirs := []string{plain, withNoop, withRC}
		s := measure(c.runs, c.withBase([]func() sample{build(plain, false), build(withNoop, true), build(withRC, true)}, func(bin string) sample {
			if len(dirs) == 3 {
				abs, err := filepath.Abs(bin)
				if err != nil {
					fail(err)
				}
				dirs = append(dirs, pkg("kz-base", abs, true))
			}
			return build(dirs[3], true)()
		})...)
		fmt.Printf("%7d | %6.2fs %8.0fM | %6.2fs %8.0fM | %6.2fs %8.0fM | %8.2fx %8.2fx%s\n", n,
			s[0].cpu.Seconds(), s[0].mb(), s[1].cpu.Seconds(), s[1].mb(), s[2].cpu.Seconds(), s[2].mb(),
			s[1].cpu.Seconds()/s[0].cpu.Seconds(), s[2].cpu.Seconds()/s[0].cpu.Seconds(), c.vsBase(fmt.Sprintf("kustomize %d", n), s[2], s))
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}
	fmt.Println("fn cost: build with the no-op exec function over build without it; rc cost: the same with rotate-certs as the function.")
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

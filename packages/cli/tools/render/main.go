// Command tessera-render renders deploy manifests the way users will: a
// kustomize directory with the kustomize API (what `kubectl kustomize` runs),
// or a Helm chart with Helm's own engine (what `helm template` runs). The
// CLI's tests use it to check that generated manifests render and that the
// real kube-apiserver accepts what they render to.
//
//	tessera-render kustomize <dir>
//	tessera-render helm <chart-dir> <release-name> <namespace>
package main

import (
	"fmt"
	"os"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) < 3 {
		fail("usage: tessera-render kustomize <dir> | helm <chart-dir> <release> <namespace>")
	}
	switch os.Args[1] {
	case "kustomize":
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		m, err := k.Run(filesys.MakeFsOnDisk(), os.Args[2])
		if err != nil {
			fail("kustomize " + os.Args[2] + ": " + err.Error())
		}
		out, err := m.AsYaml()
		if err != nil {
			fail(err.Error())
		}
		os.Stdout.Write(out)
	case "helm":
		if len(os.Args) != 5 {
			fail("usage: tessera-render helm <chart-dir> <release> <namespace>")
		}
		renderHelm(os.Args[2], os.Args[3], os.Args[4])
	default:
		fail("unknown command " + os.Args[1])
	}
}

func renderHelm(dir, release, namespace string) {
	chart, err := loader.Load(dir)
	if err != nil {
		fail("load chart " + dir + ": " + err.Error())
	}
	options := common.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}
	values, err := chartutil.ToRenderValues(chart, map[string]interface{}{}, options, common.DefaultCapabilities)
	if err != nil {
		fail("values: " + err.Error())
	}
	rendered, err := engine.Render(chart, values)
	if err != nil {
		fail("render " + dir + ": " + err.Error())
	}
	for _, crd := range chart.CRDObjects() {
		fmt.Printf("---\n# Source: %s\n%s\n", crd.Filename, string(crd.File.Data))
	}
	for name, text := range rendered {
		if len(text) == 0 || name[len(name)-4:] == ".txt" {
			continue
		}
		fmt.Printf("---\n# Source: %s\n%s\n", name, text)
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "tessera-render: "+msg)
	os.Exit(1)
}

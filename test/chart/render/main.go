// chart-render renders a Helm chart the way `helm template` does, for the chart tests
// (there is no helm binary on the test machines). It uses the same engine helm uses:
// Go's text/template with the sprig functions, plus helm's own additions (include, tpl,
// required, toYaml, fromYaml, toJson, lookup, .Files, .Capabilities).
//
// Only the parts of helm this project's chart uses are implemented; anything else fails
// loudly at render time rather than rendering differently from helm.
//
//	chart-render --chart DIR [--values FILE]... [--name NAME] [--namespace NS]
//	             [--kube-version v1.20.2] [--api-versions group/version[/Kind]]...
//	             [--notes FILE]
//
// Output: every rendered template, in file-name order, as YAML documents separated by
// `---` and preceded by `# Source: <chart>/templates/<file>`, like `helm template`.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/semver"
	"github.com/Masterminds/sprig"
	yamlv2 "gopkg.in/yaml.v2"
	yamlv3 "gopkg.in/yaml.v3"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// Files is helm's .Files: every file of the chart outside templates/, by relative path.
type Files map[string][]byte

func (f Files) Get(name string) string      { return string(f[name]) }
func (f Files) GetBytes(name string) []byte { return f[name] }
func (f Files) Glob(pattern string) Files {
	out := Files{}
	for name, data := range f {
		if ok, _ := path.Match(pattern, name); ok {
			out[name] = data
		}
	}
	return out
}

// APIVersions is helm's .Capabilities.APIVersions.
type APIVersions []string

func (a APIVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

// KubeVersion is helm's .Capabilities.KubeVersion.
type KubeVersion struct {
	Version, Major, Minor, GitVersion string
}

func (k KubeVersion) String() string { return k.Version }

type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions APIVersions
}

// The API versions `helm template` assumes without a cluster (a subset, for shape tests).
var defaultAPIVersions = []string{
	"v1", "apps/v1", "policy/v1", "policy/v1/PodDisruptionBudget",
	"networking.k8s.io/v1", "networking.k8s.io/v1/NetworkPolicy",
	"rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1",
}

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "chart-render: "+format+"\n", args...)
	os.Exit(1)
}

// toJSONCompatible converts YAML-decoded data to what helm holds: helm reads values
// through sigs.k8s.io/yaml (YAML -> JSON -> Go), so every number is a float64.
func toJSONCompatible(v interface{}) (map[string]interface{}, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]interface{}{}
	if string(data) == "null" {
		return out, nil
	}
	err = json.Unmarshal(data, &out)
	return out, err
}

func readYAMLMap(text []byte) (map[string]interface{}, error) {
	var raw interface{}
	if err := yamlv3.Unmarshal(text, &raw); err != nil {
		return nil, err
	}
	return toJSONCompatible(raw)
}

// mergeValues overlays src on dst as helm coalesces user values over chart defaults:
// maps merge recursively, anything else replaces, and null deletes the key.
func mergeValues(dst, src map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range src {
		if v == nil {
			delete(out, k)
			continue
		}
		srcMap, srcIsMap := v.(map[string]interface{})
		dstMap, dstIsMap := out[k].(map[string]interface{})
		if srcIsMap && dstIsMap {
			out[k] = mergeValues(dstMap, srcMap)
		} else {
			out[k] = v
		}
	}
	return out
}

func toYAML(v interface{}) string {
	// sigs.k8s.io/yaml: JSON first, then YAML with sorted keys; helm trims the newline.
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var obj interface{}
	if err := yamlv2.Unmarshal(data, &obj); err != nil {
		return ""
	}
	out, err := yamlv2.Marshal(obj)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(out), "\n")
}

func fromYAML(text string) map[string]interface{} {
	m, err := readYAMLMap([]byte(text))
	if err != nil {
		return map[string]interface{}{"Error": err.Error()}
	}
	return m
}

func toJSON(v interface{}) string {
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}

func required(message string, value interface{}) (interface{}, error) {
	if value == nil {
		return nil, errors.New(message)
	}
	if s, ok := value.(string); ok && s == "" {
		return nil, errors.New(message)
	}
	return value, nil
}

func parseKubeVersion(raw string) KubeVersion {
	v, err := semver.NewVersion(raw)
	if err != nil {
		die("--kube-version %q: %v", raw, err)
	}
	return KubeVersion{
		Version:    "v" + v.String(),
		Major:      fmt.Sprint(v.Major()),
		Minor:      fmt.Sprint(v.Minor()),
		GitVersion: "v" + v.String(),
	}
}

func main() {
	var valueFiles, apiVersions multiFlag
	chartDir := flag.String("chart", "", "chart directory")
	name := flag.String("name", "arbiter", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	kubeVersion := flag.String("kube-version", "v1.31.0", "Kubernetes version for .Capabilities")
	notesFile := flag.String("notes", "", "write the rendered NOTES.txt here")
	flag.Var(&valueFiles, "values", "values file (repeatable; later files win)")
	flag.Var(&apiVersions, "api-versions", "API version for .Capabilities.APIVersions (repeatable)")
	flag.Parse()
	if *chartDir == "" {
		die("--chart is required")
	}
	if len(apiVersions) == 0 {
		apiVersions = defaultAPIVersions
	}

	chartMeta, err := os.ReadFile(filepath.Join(*chartDir, "Chart.yaml"))
	if err != nil {
		die("%v", err)
	}
	var meta map[string]interface{}
	if err := yamlv3.Unmarshal(chartMeta, &meta); err != nil {
		die("Chart.yaml: %v", err)
	}
	chartName := fmt.Sprint(meta["name"])
	chart := map[string]interface{}{}
	for k, v := range meta {
		chart[strings.ToUpper(k[:1])+k[1:]] = v // helm's chart.Metadata field names
	}

	defaults, err := os.ReadFile(filepath.Join(*chartDir, "values.yaml"))
	if err != nil {
		die("%v", err)
	}
	values, err := readYAMLMap(defaults)
	if err != nil {
		die("values.yaml: %v", err)
	}
	for _, file := range valueFiles {
		text, err := os.ReadFile(file)
		if err != nil {
			die("%v", err)
		}
		user, err := readYAMLMap(text)
		if err != nil {
			die("%s: %v", file, err)
		}
		values = mergeValues(values, user)
	}

	files := Files{}
	var templateNames []string
	err = filepath.Walk(*chartDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(*chartDir, p)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "templates/") {
			templateNames = append(templateNames, rel)
		} else {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[rel] = data
		}
		return nil
	})
	if err != nil {
		die("%v", err)
	}
	sort.Strings(templateNames)

	root := template.New("chart")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env") // helm removes these two
	delete(funcs, "expandenv")
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["toJson"] = toJSON
	funcs["required"] = required
	funcs["lookup"] = func(string, string, string, string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil // helm template: no cluster, empty result
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return strings.ReplaceAll(buf.String(), "<no value>", ""), err
	}
	root.Funcs(funcs).Option("missingkey=zero")
	for _, rel := range templateNames {
		text, err := os.ReadFile(filepath.Join(*chartDir, rel))
		if err != nil {
			die("%v", err)
		}
		if _, err := root.New(chartName + "/" + rel).Parse(string(text)); err != nil {
			die("%v", err)
		}
	}

	top := map[string]interface{}{
		"Values": values,
		"Chart":  chart,
		"Release": map[string]interface{}{
			"Name": *name, "Namespace": *namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Capabilities": Capabilities{KubeVersion: parseKubeVersion(*kubeVersion), APIVersions: APIVersions(apiVersions)},
		"Files":        files,
	}

	var out bytes.Buffer
	for _, rel := range templateNames {
		base := path.Base(rel)
		if strings.HasPrefix(base, "_") || !(strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml") || base == "NOTES.txt") {
			continue
		}
		full := chartName + "/" + rel
		data := map[string]interface{}{}
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": full, "BasePath": chartName + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, full, data); err != nil {
			die("%v", err)
		}
		rendered := strings.ReplaceAll(buf.String(), "<no value>", "")
		if base == "NOTES.txt" {
			if *notesFile != "" {
				if err := os.WriteFile(*notesFile, []byte(rendered), 0o644); err != nil {
					die("%v", err)
				}
			}
			continue
		}
		if strings.TrimSpace(rendered) == "" {
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", full, strings.TrimSpace(rendered))
	}
	os.Stdout.Write(out.Bytes())
}

package testhome

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageIsHermetic checks that every package with tests runs them
// through Main, so no test reads the developer's home. The scenarios give
// each script (and each benchmark) a home of its own instead.
func TestEveryPackageIsHermetic(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{"scenarios": true}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata" || d.Name() == "bin" || own[rel] {
			return filepath.SkipDir
		}
		tests, _ := filepath.Glob(filepath.Join(path, "*_test.go"))
		if len(tests) == 0 {
			return nil
		}
		checked++
		for _, f := range tests {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), "testhome.Main(m") || rel == "core/testhome" {
				return nil
			}
		}
		t.Errorf("%s: no TestMain running testhome.Main: its tests would see the developer's HOME", rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("walked %s and found only %d test packages", root, checked)
	}
}

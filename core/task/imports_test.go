package task

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTaskImportsNoWiring: core/task is the tasks and their file store; it
// imports neither the packages that assemble party (core/party, and
// core/session with the tmux client it drives) nor its GitHub store
// (core/task/github imports it). Choosing a store is core/party's.
func TestTaskImportsNoWiring(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"core/party", "core/session", "core/tmux", "core/task/github"}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		checked++
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == "github.com/partyhq/party/"+bad {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("found only %d source files", checked)
	}
}

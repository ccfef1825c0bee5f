package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/partyhq/party/cmd/party/cli"
	"github.com/partyhq/party/core/exitcode"
)

// regenerate is the command that brings the generated pages up to date.
const regenerate = "make docs"

func main() {
	dir := flag.String("dir", "docs", "the docs directory to write into")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}

// write brings the generated pages under dir up to date.
func write(dir string) error {
	pages, err := generate()
	if err != nil {
		return err
	}
	cmds := filepath.Join(dir, "commands")
	if err := os.MkdirAll(cmds, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(cmds, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		rel, _ := filepath.Rel(dir, f)
		if _, ok := pages[filepath.ToSlash(rel)]; !ok {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	for name, b := range pages {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns every generated page by its path under docs/.
func generate() (map[string][]byte, error) {
	pages := map[string][]byte{}
	root := cli.NewRootCmd(&cli.Factory{})
	root.DisableAutoGenTag = true // no date: the pages change only when the commands do
	if err := commandPages(root, pages); err != nil {
		return nil, err
	}
	pages["exit-codes.md"] = exitCodes()
	return pages, nil
}

// commandPages adds the page of c and of each command below it, named as
// cobra's GenMarkdownTree names them (party_pm_task_add.md).
func commandPages(c *cobra.Command, pages map[string][]byte) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := commandPages(sub, pages); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	b.WriteString(generatedNote("the command tree in cmd/party/cli"))
	if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
		return fmt.Errorf("%s: %w", c.CommandPath(), err)
	}
	pages["commands/"+pageName(c)] = b.Bytes()
	return nil
}

// pageName is the file of c's page.
func pageName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// generatedNote is the first line of a generated page.
func generatedNote(from string) string {
	return fmt.Sprintf("<!-- Generated from %s by `%s` (go run ./cmd/party/gendocs): do not edit. -->\n\n", from, regenerate)
}

// exitCodes is docs/exit-codes.md, made from the error table (core/exitcode).
func exitCodes() []byte {
	var b bytes.Buffer
	b.WriteString(generatedNote("the error table in core/exitcode (table.go, docs.go)"))
	b.WriteString(`# Exit statuses and error codes

Every command exits with one of these statuses. A failure prints ` + "`party: MESSAGE`" + ` on
stderr, and with ` + "`--json`" + ` ` + "`" + `{"error":{"code":CODE,"message":MESSAGE}}` + "`" + ` on stdout,
where CODE is one of the error codes below. New statuses and codes are appended; a code keeps
its meaning.

## Exit statuses

| exit | meaning | codes |
|---|---|---|
`)
	for _, e := range exitcode.Exits() {
		codes := make([]string, len(e.Codes))
		for i, c := range e.Codes {
			codes[i] = "`" + c + "`"
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", e.Exit, cell(e.Meaning), strings.Join(codes, ", "))
	}
	b.WriteString(`
## Error codes

| code | exit | meaning |
|---|---|---|
`)
	codes := exitcode.Codes()
	sort.SliceStable(codes, func(i, j int) bool { return codes[i].Code < codes[j].Code })
	for _, c := range codes {
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", c.Code, c.Exit, cell(c.Meaning))
	}
	b.WriteString(`
## Classes of a failed trigger

A trigger that failed carries a class (` + "`party trigger show`" + `, the API); ` + "`party trigger --wait`" + `
exits with the class's status and prints the class as its code.

| class | exit | meaning |
|---|---|---|
`)
	for _, c := range exitcode.Classes() {
		fmt.Fprintf(&b, "| `%s` | %d | %s |\n", c.Code, c.Exit, cell(c.Meaning))
	}
	return b.Bytes()
}

// cell is s made safe for a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

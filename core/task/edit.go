package task

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/partyhq/party/core/shellwords"
)

// Terminal is the user's terminal an editor runs on.
type Terminal struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// Edit opens text in the user's editor ($VISUAL, else $EDITOR, else vi;
// a command line split as shell words, never run by a shell) on a
// temporary copy, and returns what the user saved. An editor that fails
// leaves the text unchanged and says so.
func Edit(getenv func(string) string, term Terminal, text string) (string, error) {
	editor := getenv("VISUAL")
	if editor == "" {
		editor = getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	argv, err := shellwords.SplitCommand(editor)
	if err != nil || len(argv) == 0 {
		return "", fmt.Errorf("editor %q: %v: %w", editor, err, ErrInvalid)
	}
	tmp, err := os.MkdirTemp("", "party-doc")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	path := filepath.Join(tmp, "task.md")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	// Not CommandContext: a Ctrl-C on the terminal reaches the editor,
	// which decides what it means (as git leaves it to its editor); party
	// never kills it, which would lose the edit.
	cmd := exec.Command(argv[0], append(argv[1:], path)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.In, term.Out, term.ErrOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("editor %s: %w (the document is unchanged)", argv[0], err)
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

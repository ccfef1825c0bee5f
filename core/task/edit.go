package task

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/partyhq/party/core/clock"
	"github.com/partyhq/party/core/shellwords"
	"github.com/partyhq/party/core/state"
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

// EditDoc opens task id's document of st in the user's editor on term
// (Edit) and, when it changed, saves it as actor; saved says it did. It
// is saved only over the document the editor opened: a change made
// meanwhile (pm doc --set, another editor) is never overwritten, and the
// editor's text is kept in a file of its own in the directory unsaved
// gives, which the error names.
func EditDoc(ctx context.Context, st Store, actor, id string, getenv func(string) string, term Terminal, clk clock.Clock, unsaved func() (string, error)) (saved bool, err error) {
	text, err := st.Doc(ctx, id)
	if err != nil {
		return false, err
	}
	edited, err := Edit(getenv, term, text)
	if err != nil || edited == text {
		return false, err
	}
	err = st.SetDocFrom(ctx, actor, id, text, edited)
	if errors.Is(err, ErrConflict) {
		kept, kerr := keepDoc(unsaved, clk, id, edited)
		if kerr != nil {
			return false, fmt.Errorf("%w; your text could not be kept (%v): it is lost", err, kerr)
		}
		return false, fmt.Errorf("%w, so your text was not saved over it; it is in %s (party pm doc %s --print shows the new one)", err, kept, id)
	}
	return err == nil, err
}

// keepDoc writes text, an edit of task id's document that could not be
// saved, to a file of its own in the directory unsaved gives and returns
// its path.
func keepDoc(unsaved func() (string, error), clk clock.Clock, id, text string) (string, error) {
	dir, err := unsaved()
	if err != nil {
		return "", err
	}
	if err := state.MkdirPrivate(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("task-%s-%s.md", id, clk.Now().UTC().Format("20060102T150405.000")))
	return path, state.WriteFile(path, []byte(text), 0o600)
}

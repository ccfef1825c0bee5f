package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/deliver"
	"github.com/partyhq/party/core/state"
	"github.com/partyhq/party/core/tmux"
)

// SendOptions are the inputs of party send.
type SendOptions struct {
	Role  string
	Text  string
	Stdin bool // read the text from stdin ("-")
	Force bool
	Raw   bool // send a command on purpose: no literal rule
	Clear bool // empty the input box of someone else's text first
}

// maxPaste is the largest text pasted as is; a longer one is written to a
// file in the state dir and the agent gets a one-line pointer to it.
const maxPaste = 512 << 10

func newSendCmd(f *Factory, runF func(context.Context, *SendOptions) error) *cobra.Command {
	opts := &SendOptions{}
	cmd := &cobra.Command{
		Use:   "send ROLE [--] TEXT|-",
		Short: "Deliver a message to the agent with ROLE and confirm it was submitted",
		Long: `Deliver TEXT (or stdin with -) to the pane with ROLE as one paste, press
Enter once the agent's input box shows it, and confirm the agent took it.
The text is sent as given, except that CRLF becomes LF and control
characters other than tab and LF (ESC included) are removed. A TEXT that
starts with '-' goes after '--'.

The text is plain text for the model, never a command: where an agent would
run it (a leading '!' or '/', claude's bare 'exit') party either makes it
plain by a rule the agent honours or refuses it (exit 2); --raw sends it as
the agent reads it, a command on purpose.

An agent still starting is waited for (up to 30s). Text already in the
input box (someone typing) is never merged with the message: party refuses
(exit 7) unless --clear, which empties the box first.

Outcomes: submitted, queued (the agent was busy and queued it), unconfirmed
(exit 6) and failed. A dead pane or one not running its agent exits 3; a
menu or dialog on screen exits 1 unless --force.`,
		Example: `  party send claude 'Review the diff in /tmp/x.patch'
  git diff | party send codex -
  party send codex -- '-n is not a flag here'
  party send claude --raw /compact`,
		Args: argsBetween(2, 2),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Role = args[0]
			if args[1] == "-" {
				opts.Stdin = true
			} else {
				opts.Text = args[1]
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return sendRun(c.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "send even when a menu or dialog is on screen")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "send the text as the agent reads it: a leading / or ! is its command")
	cmd.Flags().BoolVar(&opts.Clear, "clear", false, "empty the input box first when it holds someone else's text")
	return cmd
}

type sendJSON struct {
	Role    string `json:"role"`
	Session string `json:"session,omitempty"`
	deliver.Result
	MS    int64      `json:"ms"`
	Error *errorJSON `json:"error,omitempty"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func sendRun(ctx context.Context, f *Factory, opts *SendOptions) error {
	text, err := messageText(f, opts.Text, opts.Stdin)
	if err != nil {
		return err
	}
	out := sendJSON{Role: opts.Role, Result: deliver.Result{Outcome: deliver.Failed}}
	err = func() error {
		tc := f.Tmux()
		t, err := resolveRole(ctx, f, tc, opts.Role)
		if err != nil {
			return err
		}
		out.Session, out.Pane = t.Session, t.Pane.ID
		info := t.Info
		root, err := f.StateRoot()
		if err != nil {
			return err
		}
		if len(text) > maxPaste {
			if text, err = spill(root, info, text); err != nil {
				return err
			}
		}
		d := deliverer(f, tc, root, info, map[string]string{t.Pane.ID: opts.Role})
		cfg, err := f.Config()
		if err != nil {
			return err
		}
		res, err := d.Send(ctx, deliver.Request{Pane: t.Pane.ID, Profile: cfg.Tune(opts.Role, t.Profile), Text: text, Force: opts.Force, Raw: opts.Raw, Clear: opts.Clear})
		out.Result = res
		out.MS = res.Duration.Milliseconds()
		return err
	}()
	if err != nil {
		if f.JSON {
			code, _ := classify(err)
			out.Error = &errorJSON{Code: code, Message: err.Error()}
			writeJSON(f.IO.Out, out)
			return &reported{error: err, json: true}
		}
		return err
	}
	if f.JSON {
		writeJSON(f.IO.Out, out)
		return nil
	}
	fmt.Fprintf(f.IO.Out, "%s to %s (%s)\n", out.Outcome, opts.Role, out.Pane)
	return nil
}

// lockDir is where the pane locks of one tmux server live.
func lockDir(root, socketPath string) string {
	h := sha256.Sum256([]byte(socketPath))
	return filepath.Join(root, "locks", hex.EncodeToString(h[:6]))
}

// spill writes a text too long to paste into the session's state dir and
// returns the pointer message that replaces it.
func spill(root string, info tmux.SessionInfo, text string) (string, error) {
	dir := info.StateDir
	if dir == "" {
		dir = state.SessionDir(root, info.SocketPath, info.Name)
	}
	dir = filepath.Join(dir, "messages")
	if err := state.MkdirPrivate(dir); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(text))
	path := filepath.Join(dir, "msg-"+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(h[:6])+".md")
	if err := state.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", err
	}
	return fmt.Sprintf("The message is too long to paste (%d bytes). Read it from the file %s", len(text), path), nil
}

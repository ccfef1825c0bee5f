package party

import (
	"context"
	"fmt"

	"github.com/partyhq/party/core/record"
)

// RecordOptions are the inputs of Record.
type RecordOptions struct {
	// Out is the directory of the casts; "" is record.DefaultOut.
	Out string
	// Redact are regexps redacted besides record.DefaultRedactions.
	Redact []string
}

// Record records every pane of the session as asciicasts (record.Session)
// until ctx ends or the session does, and returns their directory. A bad
// Redact pattern is a usage error.
func Record(ctx context.Context, env *Env, opts RecordOptions) (string, error) {
	sc, err := env.OpenParty(ctx)
	if err != nil {
		return "", err
	}
	redactor, err := redactorOf(opts.Redact)
	if err != nil {
		return "", err
	}
	s := &record.Session{Mux: env.Tmux, Clock: env.Clock, Getenv: env.Getenv, Name: sc.Session, StateDir: sc.Info.StateDir,
		Panes: sc.Panes, Out: opts.Out, Redactor: redactor,
		Output: func(ctx context.Context) (record.Stream, error) {
			cc, err := env.Tmux.Control(ctx, sc.Session, true)
			if err != nil {
				return record.Stream{}, err
			}
			return record.Stream{Output: cc.Output(), Close: cc.Close}, nil
		},
		Started: func(out string, n int) {
			env.Warnf("recording %d panes of %s into %s (Ctrl-C stops)", n, sc.Session, out)
		}}
	return s.Run(ctx)
}

// redactorOf redacts record.DefaultRedactions and the patterns of extra;
// a pattern that does not compile is a usage error.
func redactorOf(extra []string) (*record.Redactor, error) {
	r, err := record.NewRedactor(append(append([]string{}, record.DefaultRedactions...), extra...))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return r, nil
}

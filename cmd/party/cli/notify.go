package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
)

func newNotifyCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "notify", Short: "Tell a person when an agent needs them",
		Long: `party's notifier tells you when an agent asks for a permission, shows a
dialog, fails a turn, finishes a long one, when the review loop needs a
discussion and when the supervisor gives up on a trigger: a tmux message and
bell, the terminal's own notification (OSC 9/777), a desktop notification and
a webhook (notify.* keys). It runs in a hidden window of the session
(party-notify), started by party start with notify.enabled or --notify, or
by party notify start.`}
	keep := newNotifyKeepCmd(f, nil)
	keep.Hidden = true
	cmd.AddCommand(newNotifyTestCmd(f, nil), newNotifyStartCmd(f, nil), newNotifyWatchCmd(f, nil), keep)
	return cmd
}

// NotifyTestOptions are the inputs of party notify test (none).
type NotifyTestOptions struct{}

func newNotifyTestCmd(f *Factory, runF func(context.Context, *NotifyTestOptions) error) *cobra.Command {
	return noArgsCmd(f, "test", "Send a test notification through every sink", &NotifyTestOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *NotifyTestOptions) error {
			res, err := party.NotifyTest(ctx, f.env())
			if err != nil || f.JSON {
				return f.show(err, res, "")
			}
			return showRows(f, nil, res, resultRows(res), "SINK", "STATUS", "DETAIL")
		})
}

// NotifyStartOptions are the inputs of party notify start (none).
type NotifyStartOptions struct{}

func newNotifyStartCmd(f *Factory, runF func(context.Context, *NotifyStartOptions) error) *cobra.Command {
	return noArgsCmd(f, "start", "Start the session's notifier in its hidden window", &NotifyStartOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *NotifyStartOptions) error {
			st, err := party.StartNotifier(ctx, f.env())
			return f.show(err, st, "notifier of %s running (pid %d)", st.Session, st.PID)
		})
}

// NotifyWatchOptions are the inputs of party notify watch (none).
type NotifyWatchOptions struct{}

func newNotifyWatchCmd(f *Factory, runF func(context.Context, *NotifyWatchOptions) error) *cobra.Command {
	return noArgsCmd(f, "watch", "Run the session's notifier in the foreground", &NotifyWatchOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *NotifyWatchOptions) error {
			return party.NotifyWatch(ctx, f.env(), f.IO.Out)
		})
}

// NotifyKeepOptions are the inputs of party notify keep (none).
type NotifyKeepOptions struct{}

func newNotifyKeepCmd(f *Factory, runF func(context.Context, *NotifyKeepOptions) error) *cobra.Command {
	return noArgsCmd(f, "keep", "Run the notifier and restart it when it crashes", &NotifyKeepOptions{}, runF,
		func(ctx context.Context, f *Factory, _ *NotifyKeepOptions) error {
			return party.KeepNotifier(ctx, f.env(), f.IO.Out)
		})
}

// resultRow is a sink's result as party notify test prints it.
type resultRow party.NotifyResult

func (r resultRow) Row() []string { return []string{r.Sink, r.Status, r.Detail} }

func resultRows(res []party.NotifyResult) []resultRow {
	out := make([]resultRow, len(res))
	for i, r := range res {
		out[i] = resultRow(r)
	}
	return out
}

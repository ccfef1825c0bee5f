package cli

import (
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
	test := &cobra.Command{Use: "test", Short: "Send a test notification through every sink",
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			res, err := party.NotifyTest(c.Context(), f.env())
			if err != nil || f.JSON {
				return f.show(err, res, "")
			}
			return showRows(f, nil, res, resultRows(res), "SINK", "STATUS", "DETAIL")
		}}
	start := &cobra.Command{Use: "start", Short: "Start the session's notifier in its hidden window",
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			st, err := party.StartNotifier(c.Context(), f.env())
			return f.show(err, st, "notifier of %s running (pid %d)", st.Session, st.PID)
		}}
	watch := &cobra.Command{Use: "watch", Short: "Run the session's notifier in the foreground",
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error {
			return party.NotifyWatch(c.Context(), f.env(), f.IO.Out)
		}}
	cmd.AddCommand(test, start, watch)
	return cmd
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

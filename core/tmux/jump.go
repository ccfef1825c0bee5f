package tmux

import (
	"context"
	"fmt"
	"regexp"
)

var paneID = regexp.MustCompile(`^%[0-9]+$`)

// Jump shows pane id on the client of the terminal party runs in (the one
// $TMUX names): its window and the pane become current, and the client
// switches to its session. One tmux process, argv only.
func (c *Client) Jump(ctx context.Context, id string) error {
	if !paneID.MatchString(id) {
		return fmt.Errorf("jump to %q: not a pane id: %w", id, ErrCommand)
	}
	if _, err := c.Run(ctx, "select-window", "-t", id, cmdSep, "select-pane", "-t", id, cmdSep, "switch-client", "-t", id); err != nil {
		return fmt.Errorf("jump to %s: %w", id, err)
	}
	return nil
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/partyhq/party/core/party"
	"github.com/partyhq/party/core/termsafe"
)

// BlocksOptions are the inputs of party blocks (the text is stdin).
type BlocksOptions struct{}

func newBlocksCmd(f *Factory, runF func(context.Context, *BlocksOptions) error) *cobra.Command {
	opts := &BlocksOptions{}
	return &cobra.Command{
		Use:   "blocks",
		Short: "Print the tagged blocks found in text on stdin, one JSON line each",
		Long: `Read captured agent output on stdin and print each complete, well-formed
[[POLI:MSG {...}]] … [[/POLI:MSG]] block as one JSON line (a block redrawn
several times once, its last copy). Malformed or unterminated blocks are
reported on stderr as LINE:COL: message.`,
		Args: argsBetween(0, 0),
		RunE: func(c *cobra.Command, _ []string) error { return run(c, f, opts, runF, blocksRun) },
	}
}

// blocksRun prints the tagged blocks of stdin, one JSON line each, and the
// malformed ones on stderr.
func blocksRun(_ context.Context, f *Factory, _ *BlocksOptions) error {
	text, err := io.ReadAll(f.IO.In)
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	found, errs := party.Blocks(string(text))
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	for _, b := range found {
		line.Reset()
		if err := enc.Encode(b); err != nil {
			return err
		}
		if _, err := f.IO.Out.Write(termsafe.JSON(line.Bytes())); err != nil {
			return err
		}
	}
	for _, e := range errs {
		fmt.Fprintf(f.IO.ErrOut, "party: blocks: %s\n", termsafe.Text(e.Error()))
	}
	return nil
}

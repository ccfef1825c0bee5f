// Command party runs teams of interactive AI coding agents in tmux panes.
package main

import (
	"os"

	"github.com/partyhq/party/cmd/party/cli"
)

func main() { os.Exit(cli.Main()) }

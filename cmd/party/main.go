package main

import (
	"os"

	"github.com/partyhq/party/cmd/party/cli"
)

func main() { os.Exit(cli.Main()) }

package main

import (
	"os"

	"github.com/partyhq/party/mockagents"
)

func main() { os.Exit(mockagents.Main()) }

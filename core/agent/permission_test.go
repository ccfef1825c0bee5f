package agent

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPermissionAsked(t *testing.T) {
	tests := []struct {
		name, screen, want string
	}{
		{"codex's approval, with its command", "  Would you like to run the following command?\n\n  Environment: local\n\n  $ ls -la\n\n› 1. Yes, proceed (y)\n  2. No (esc)",
			"Would you like to run the following command? ls -la"},
		{"claude's", " Bash command\n\n   rm -rf build\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. No", "Do you want to proceed?"},
		{"gemini's, in a box", "╭──╮\n│ Allow execution of [Shell]? │\n│ ● 1. Allow once │\n╰──╯", "Allow execution of [Shell]?"},
		{"a trust dialog is no permission", " Do you trust the files in this folder?\n ❯ 1. Yes, proceed\n   2. No, exit", ""},
		{"a command line before the question is not its command", "$ make\n Do you want to proceed?\n ❯ 1. Yes", "Do you want to proceed?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, PermissionAsked(tt.screen))
		})
	}
}

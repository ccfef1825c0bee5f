package deliver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/partyhq/party/core/state"
)

// SpillDir is where, in a session's state dir, Spill writes the texts too
// long to paste; party stop removes it.
const SpillDir = "messages"

// MaxPaste is the largest text pasted as is; a longer one is written to a
// file and the agent gets a one-line pointer to it (Spill).
const MaxPaste = 512 << 10

// Spill returns text, or when it is longer than MaxPaste writes it into
// the messages directory of the session state dir stateDir and returns
// the pointer message that replaces it.
func Spill(stateDir, text string) (string, error) {
	if len(text) <= MaxPaste {
		return text, nil
	}
	dir := filepath.Join(stateDir, SpillDir)
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

// LockDir is where the pane locks of the tmux server at socketPath live,
// under party's state root.
func LockDir(root, socketPath string) string {
	h := sha256.Sum256([]byte(socketPath))
	return filepath.Join(root, "locks", hex.EncodeToString(h[:6]))
}

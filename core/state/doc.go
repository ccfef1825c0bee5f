// Package state owns party's files: one directory per session under
// $XDG_STATE_HOME/party (mode 0700), files written atomically, locks that
// hold across processes (flock), the JSONL event log, and the tokens whose
// hashes those files keep (NewToken, HashToken, SameToken).
package state

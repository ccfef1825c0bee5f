// Package golden compares outputs with expected files kept under golden/,
// after normalizing what changes from run to run (pane ids, nonces, times,
// durations, trailing spaces). One flag, -update, rewrites the files.
// Control bytes are escaped so diffs stay readable.
package golden

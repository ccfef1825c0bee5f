// Package daemon is the one shape of party's background processes: each
// runs in a hidden window of its session (the review coordinator, the
// trigger supervisor, the notifier, the switchboard, the recorder, the
// dashboard) and keeps its files in a directory of its own.
//
// Its parts: the files of a daemon's directory (files.go: LockFile, held
// while the daemon runs and holding its pid; KeeperLock, the same of its
// keeper; LogFile) and Running, which reads them (also under the names an
// older party used, for one release); Hold, the lock a daemon takes as it
// starts; Logger, its timestamped log lines to stderr and LogFile
// (log.go); Keeper, which runs a daemon and restarts it after a crash,
// bounded by a crash loop (keeper.go); Start, which spawns a keeper or
// daemon and waits until it runs, and Stop, which sends SIGTERM to the
// keeper (else the daemon) and waits for the locks to go (process.go);
// and the names of the hidden windows, with those an iTerm2 client must
// not open as tabs (windows.go).
package daemon

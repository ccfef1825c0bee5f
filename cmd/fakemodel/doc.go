// Command fakemodel serves the fake model endpoints of package
// mockagents/fakemodel until it is interrupted, so the real agents run
// offline: it prints its base URL (and writes it to --addr-file).
package main

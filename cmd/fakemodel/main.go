package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/partyhq/party/mockagents/fakemodel"
)

func main() { os.Exit(run()) }

func run() int {
	fs := flag.NewFlagSet("fakemodel", flag.ContinueOnError)
	script := fs.String("script", "", "answer script (mock agent script language); read again when it changes")
	logPath := fs.String("log", "", "append one JSON line per request to this file")
	usageLog := fs.String("usage-log", "", "append one JSON line per answer, the token usage it carried, to this file")
	addrFile := fs.String("addr-file", "", "write the base URL to this file once listening")
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	dump := fs.String("dump", "", "write every request body into this directory")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fakemodel: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	srv, err := fakemodel.Start(fakemodel.Options{ScriptPath: *script, LogPath: *logPath, UsageLogPath: *usageLog, DumpDir: *dump, Addr: *listen})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile, []byte(srv.URL()+"\n"), 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "fakemodel: %v\n", err)
			return 1
		}
	}
	fmt.Println(srv.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return 0
}

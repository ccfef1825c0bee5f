// Command gendocs writes the pages of docs/ that are made from the code:
// docs/commands/*.md, one page per command, by cobra's own generator
// (github.com/spf13/cobra/doc) from party's command tree, and
// docs/exit-codes.md from the error table of core/exitcode. Run it from the
// repository's root after changing a command, a flag or the error table:
//
//	make docs        # go run ./cmd/party/gendocs
//
// It removes the pages of commands that are gone. Its tests fail while
// docs/ differs from what it would write, and they keep the rest of docs/
// true as well: the design's package table names exactly the packages that
// exist, every citation of docs/ in the code (a page and a section number)
// names a page and a numbered heading that exist, every relative link of
// README.md and docs/ resolves, and README.md stays under 15 KB.
package main

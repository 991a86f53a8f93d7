// Flag parsing, usage and error helpers shared by every command, so that all commands
// behave alike: --help/-h prints the command's usage on stdout and exits 0; a usage error
// (bad flag or value, missing argument) prints one message and the usage on stderr and
// exits 2; a runtime failure prints one "ghostdriver CMD: …" line and exits 1.

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ghostdriver/ghostdriver/internal/graph"
	"github.com/ghostdriver/ghostdriver/internal/version"
)

// synopsis is the usage line of cmd (main.go's synopses).
func synopsis(cmd string) string {
	for _, s := range synopses {
		if s.cmd == cmd {
			return s.text
		}
	}
	return "ghostdriver " + cmd
}

// printUsage writes cmd's synopsis and its flags with their defaults.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: %s\n", synopsis(fs.Name()))
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	old := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(old)
}

// parseArgs parses args into fs. done is true when the command must return code now:
// 0 after --help, 2 after a usage error.
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	fs.SetOutput(io.Discard) // the messages below replace the flag package's
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout, fs)
		return 0, true
	}
	return usageError(stderr, fs, "%v", err), true
}

// usageError prints "ghostdriver CMD: message" and the usage on stderr; it returns 2.
func usageError(stderr io.Writer, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(stderr, "ghostdriver %s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	printUsage(stderr, fs)
	return 2
}

// fail prints one "ghostdriver CMD: message" line for a runtime failure and returns 1.
// Packages prefix their errors with their own name ("replay: capture …"); when that is
// the command's name it is said once.
func fail(stderr io.Writer, cmd string, err error) int {
	msg := strings.TrimPrefix(err.Error(), cmd+": ")
	fmt.Fprintf(stderr, "ghostdriver %s: %s\n", cmd, msg)
	return 1
}

// cmdVersion: `ghostdriver version`.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if code, done := parseArgs(fs, args, stdout, stderr); done {
		return code
	}
	if fs.NArg() != 0 {
		return usageError(stderr, fs, "takes no arguments, got %q", fs.Args())
	}
	fmt.Fprintln(stdout, version.Full("ghostdriver"))
	return 0
}

// defaultSpec is the one default configuration (internal/graph), which the collector
// receiver's defaults are too: the CLI and the collector agree (defaults_test.go).
func defaultSpec() graph.Spec { return graph.DefaultSpec() }

// runContext is the context of a command that runs until Ctrl-C, SIGTERM or, when
// duration > 0, that long; stop releases it.
func runContext(duration time.Duration) (ctx context.Context, stop func()) {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	if duration <= 0 {
		return ctx, stopSignals
	}
	ctx, cancel := context.WithTimeout(ctx, duration)
	return ctx, func() { cancel(); stopSignals() }
}

//go:build !unix

package replay

import "errors"

// mkfifo: no named pipes here; the pipe tests skip (testreq.FIFO).
func mkfifo(string) error { return errors.New("named pipes need a Unix system") }

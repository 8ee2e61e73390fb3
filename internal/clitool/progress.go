package clitool

import (
	"github.com/schollz/progressbar/v3"
)

// Progress returns a starter for a byte progress bar on stderr, fitting
// client.SubmitInput.OnUpload and client.RetrieveInput.OnDownload, and a
// finish function to call when the transfers end. With enabled false both
// do nothing.
func Progress(enabled bool, desc string) (start func(files int, bytes int64) func(int64), finish func()) {
	var bar *progressbar.ProgressBar
	start = func(files int, bytes int64) func(int64) {
		if !enabled {
			return nil
		}
		bar = progressbar.DefaultBytes(bytes, desc)
		return func(n int64) { _ = bar.Add64(n) }
	}
	finish = func() {
		if bar != nil && !bar.IsFinished() {
			_ = bar.Exit() // ends the line the bar was drawing
		}
	}
	return start, finish
}

package clitool

import "runtime"

func goPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

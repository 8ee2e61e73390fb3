package client

import (
	"context"
	"errors"
	"sync"
)

// parallel runs fn(ctx, i) for i in [0,n) on at most workers goroutines
// and returns each call's error by index. With failFast, the first error
// cancels the context the remaining calls see.
func parallel(ctx context.Context, n, workers int, failFast bool, fn func(ctx context.Context, i int) error) []error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[i] = fn(ctx, i); errs[i] != nil && failFast {
					cancel()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// firstError returns the first non-nil error, preferring one that is not
// a consequence of the cancellation caused by an earlier failure.
func firstError(errs []error) error {
	var fallback error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if fallback == nil {
			fallback = err
		}
		if !isCanceled(err) {
			return err
		}
	}
	return fallback
}

func isCanceled(err error) bool { return errors.Is(err, context.Canceled) }

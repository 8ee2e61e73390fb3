package engine

import "context"

// CreatorPass is the creator daemon's one pass (--one_pass): it takes the
// spooled hook calls in and creates the pending steps now, under the
// creator lock, or, while another process holds that lock, asks it to.
func (e *Engine) CreatorPass(ctx context.Context) error { return e.kickCreator(ctx) }

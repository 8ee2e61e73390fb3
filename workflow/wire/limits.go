package wire

// Limits the clients and the server share: a client checks them before
// asking, so what it refuses is exactly what the server would.
const (
	// MaxChainSteps bounds a chain's length: a submission's num_steps, the
	// steps one extend adds, and the chain's length after it.
	MaxChainSteps = 1000000
)

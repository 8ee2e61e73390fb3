package engine

import (
	"fmt"

	"github.com/rboinc/rboinc/internal/dialguard"
)

// NotifyConfig is what rboinc.json says about notifications.
type NotifyConfig struct {
	// NotifyAllow lets webhooks reach addresses that are refused
	// otherwise (loopback, link-local, private, unique-local, multicast):
	// networks in CIDR form, single addresses or host names. Read at start.
	NotifyAllow []string `json:"notify_allow,omitempty"`
	// MaxNotifyTargets bounds one user's notification targets (webhooks
	// and e-mail addresses, each group's counted). 0: no bound.
	MaxNotifyTargets int `json:"max_notify_targets"`
}

// DefaultMaxNotifyTargets is max_notify_targets when rboinc.json does not say.
const DefaultMaxNotifyTargets = 32

// DefaultNotifyConfig allows no inner address and 32 targets per user.
func DefaultNotifyConfig() NotifyConfig {
	return NotifyConfig{MaxNotifyTargets: DefaultMaxNotifyTargets}
}

func (c NotifyConfig) check() error {
	if c.MaxNotifyTargets < 0 {
		return fmt.Errorf("max_notify_targets must not be negative; 0 means no bound")
	}
	if _, err := dialguard.Parse(c.NotifyAllow); err != nil {
		return err
	}
	return nil
}

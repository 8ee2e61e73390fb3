package wire

// Notifications: a user's own webhook signing secret and the e-mail
// addresses they may be notified at.
const (
	// PathNotifySecret: GET -> NotifySecret (made at the first ask).
	PathNotifySecret = APIPrefix + "/notify/secret"
	// PathNotifySecretRotate: POST {} -> NotifySecret, a new one.
	PathNotifySecretRotate = APIPrefix + "/notify/secret/rotate"
	// PathNotifyEmail: POST EmailConfirmation -> EmailConfirmation.
	// Without Code the server mails a one-time code to Address; with it,
	// the address is confirmed if the code is the one mailed.
	PathNotifyEmail = APIPrefix + "/notify/email"
)

// NotifySecret is the user's webhook signing secret: each webhook call
// carries X-Rboinc-Signature: sha256=<hex HMAC-SHA256 of the raw body
// under this secret>.
type NotifySecret struct {
	Secret string `json:"secret"`
}

// EmailConfirmation asks for a code for Address, or gives it back; the
// answer says whether the address is confirmed now.
type EmailConfirmation struct {
	Address   string `json:"address"`
	Code      string `json:"code,omitempty"`
	Confirmed bool   `json:"confirmed,omitempty"` // in answers
	Message   string `json:"message,omitempty"`   // in answers
}

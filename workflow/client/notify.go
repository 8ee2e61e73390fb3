package client

import (
	"context"
	"net/http"

	"github.com/rboinc/rboinc/workflow/wire"
)

// NotifySecret is the user's webhook signing secret (the server makes it
// at the first ask).
func (c *Client) NotifySecret(ctx context.Context) (string, error) {
	var r wire.NotifySecret
	err := c.call(ctx, http.MethodGet, wire.PathNotifySecret, nil, nil, &r)
	return r.Secret, err
}

// RotateNotifySecret replaces the user's signing secret and returns the
// new one.
func (c *Client) RotateNotifySecret(ctx context.Context) (string, error) {
	var r wire.NotifySecret
	err := c.call(ctx, http.MethodPost, wire.PathNotifySecretRotate, nil, struct{}{}, &r)
	return r.Secret, err
}

// ConfirmEmail asks the server to mail a code to address (code ""), or
// confirms the address with the code mailed.
func (c *Client) ConfirmEmail(ctx context.Context, address, code string) (*wire.EmailConfirmation, error) {
	var r wire.EmailConfirmation
	if err := c.call(ctx, http.MethodPost, wire.PathNotifyEmail, nil, wire.EmailConfirmation{Address: address, Code: code}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

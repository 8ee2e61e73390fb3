package engine

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/mail"
	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// E-mail addresses are confirmed by a one-time code mailed to them: the
// user asks (wire.PathNotifyEmail without a code), gets the code by mail
// and gives it back. Codes are random, kept only as salted hashes, expire,
// allow a few wrong guesses, and are mailed at a bounded rate per user and
// per address, so that asking for them is no way to spam anyone.
const (
	emailCodeTTL      = time.Hour
	emailCodeAttempts = 5
	emailCodeDigits   = 8
)

// emailCodeRate bounds the codes mailed: per user an hour, per address a day.
var emailCodeRate = store.CodeRate{PerUserHour: 3, PerAddressDay: 5}

// ConfirmEmail mails a code to req.Address (no req.Code), or confirms the
// address with the code given back.
func (e *Engine) ConfirmEmail(ctx context.Context, u store.User, req wire.EmailConfirmation) (wire.EmailConfirmation, error) {
	kind, addr, err := notifytarget.Parse(req.Address)
	if err == nil && kind != notifytarget.Email {
		err = fmt.Errorf("%q is not an e-mail address", req.Address)
	}
	if err != nil {
		return wire.EmailConfirmation{}, errf(KindBadTarget, "%v", err)
	}
	out := wire.EmailConfirmation{Address: addr}
	ok, err := e.db.EmailConfirmed(ctx, u.ID, addr)
	if err != nil {
		return out, err
	}
	if ok {
		out.Confirmed, out.Message = true, addr+" is confirmed already: rboinc-submit -notify "+addr+" mails you the group's events"
		return out, nil
	}
	if req.Code == "" {
		return out, e.mailEmailCode(ctx, u, addr, &out)
	}
	code := strings.ReplaceAll(strings.TrimSpace(req.Code), " ", "")
	err = e.db.ConfirmEmail(ctx, u.ID, addr, func(h string) bool { return codeMatches(h, code) }, emailCodeAttempts)
	if errors.Is(err, store.ErrEmailCode) {
		return out, errf(KindBadRequest, "%v", err)
	}
	if err != nil {
		return out, err
	}
	e.Log.Info("e-mail address confirmed", "user", u.Name, "address", addr)
	out.Confirmed, out.Message = true, addr+" is confirmed: rboinc-submit -notify "+addr+" mails you the group's events"
	return out, nil
}

func (e *Engine) mailEmailCode(ctx context.Context, u store.User, addr string, out *wire.EmailConfirmation) error {
	if !e.Cfg.SMTP.Configured() {
		return errf(KindBadRequest, "%w: ask the administrator to register %s for you", mail.ErrNoServer, addr)
	}
	code, hash := newEmailCode()
	err := e.db.NewEmailCode(ctx, u.ID, addr, hash, time.Now().Add(emailCodeTTL).Unix(), emailCodeRate)
	if errors.Is(err, store.ErrEmailCodeLimit) {
		return errf(KindQuota, "%v", err)
	}
	if err != nil {
		return err
	}
	text := fmt.Sprintf("The user %s of an rboinc server asks to be notified of their chains' events at this address.\n\n"+
		"To confirm it, they run:\n\n    rboinc-retrieve -confirm-email %s -code %s\n\n"+
		"The code is valid for %d minutes. If you did not ask for it, ignore this message: nothing is sent to an address that is not confirmed.\n",
		u.Name, addr, code, int(emailCodeTTL.Minutes()))
	mctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	if err := mail.Send(mctx, e.Cfg.SMTP, mail.Message{To: []string{addr}, Subject: "rboinc: confirm this address for notifications", Text: text}); err != nil {
		return fmt.Errorf("mailing the confirmation code to %s: %w", addr, err)
	}
	e.Log.Info("e-mail confirmation code sent", "user", u.Name, "address", addr)
	out.Message = fmt.Sprintf("a code was mailed to %s (valid for %d minutes): confirm with rboinc-retrieve -confirm-email %s -code CODE", addr, int(emailCodeTTL.Minutes()), addr)
	return nil
}

// newEmailCode is a random code of emailCodeDigits digits and its salted
// hash, "salt:sha256(salt code)" in hex.
func newEmailCode() (code, hash string) {
	n, _ := rand.Int(rand.Reader, big.NewInt(100_000_000))
	code = fmt.Sprintf("%0*d", emailCodeDigits, n)
	salt := make([]byte, 16)
	rand.Read(salt)
	return code, hex.EncodeToString(salt) + ":" + codeSum(salt, code)
}

func codeSum(salt []byte, code string) string {
	h := sha256.New()
	h.Write(salt)
	h.Write([]byte(code))
	return hex.EncodeToString(h.Sum(nil))
}

// codeMatches compares a code given back with a stored hash, in constant time.
func codeMatches(hash, code string) bool {
	s, sum, ok := strings.Cut(hash, ":")
	salt, err := hex.DecodeString(s)
	if !ok || err != nil {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(codeSum(salt, code)), []byte(sum)) == 1
}

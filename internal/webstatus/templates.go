package webstatus

import (
	"embed"
	"fmt"
	"html/template"
	"time"

	"github.com/rboinc/rboinc/internal/stats"
	"github.com/rboinc/rboinc/internal/words"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html"))

var funcs = template.FuncMap{
	"when": func(unix int64) string {
		if unix == 0 {
			return "–"
		}
		return time.Unix(unix, 0).UTC().Format("2006-01-02 15:04 UTC")
	},
	"took": func(from, to int64) string {
		if from == 0 || to == 0 || to < from {
			return "–"
		}
		return stats.Span(time.Duration(to-from) * time.Second)
	},
	"span":  stats.Span,
	"pct":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"width": func(f float64) string { return fmt.Sprintf("%.2f%%", f) },
	"num":   func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"bytes": words.Bytes,
	"link":  link,
	"f1":    func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"count": words.Count,
}

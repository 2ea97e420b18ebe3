package reports

import (
	"html/template"
	"io"
	"strings"
)

// HTML renders a self-contained page: no scripts, fonts or images from the
// network; the timeline is inline SVG with its details in <title> tooltips.
func (r *Report) HTML(w io.Writer) error {
	data := struct {
		*Report
		Timeline *timeline
		Upper    string
	}{Report: r, Upper: strings.ToUpper(r.Verdict)}
	if r.Failure != nil && len(r.Failure.Steps) > 0 {
		t := newTimeline(r.Failure.Steps)
		data.Timeline = &t
	}
	return page.Execute(w, data)
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"join":     strings.Join,
	"settings": settingsText,
	"sub":      func(a, b int) int { return a - b },
	"add":      func(a, b int) int { return a + b },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>outboxcheck: {{.Subject}} — {{.Upper}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #1b1f24; }
h1 .pass { color: #1a7f37; } h1 .violation, h1 .panic { color: #cf222e; } h1 .infrastructure { color: #9a6700; }
table { border-collapse: collapse; margin: .5rem 0 1.5rem; }
td, th { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
code, .mono { font-family: ui-monospace, monospace; font-size: 12px; }
.violated { color: #cf222e; font-weight: 600; }
.message { background: #fff8f8; border-left: 4px solid #cf222e; padding: .5rem 1rem; white-space: pre-wrap; }
tr.failing td { background: #ffebe9; }
.timeline { overflow-x: auto; border: 1px solid #d0d7de; }
svg text { font: 12px ui-monospace, monospace; }
.lane { stroke: #d0d7de; } .fault { fill: #fd8c73; opacity: .35; } .down { fill: #8c959f; opacity: .3; }
.step { fill: #0969da; } .step.failing { fill: #cf222e; } .num { fill: #fff; font-size: 10px; }
</style>
</head>
<body>
<h1>outboxcheck: <code>{{.Subject}}</code> — <span id="verdict" class="{{.Verdict}}">{{.Upper}}</span></h1>
{{if .Message}}<p class="message">{{.Message}}</p>{{end}}
<table>
<tr><th>checks</th><td>{{.Checks}} (+{{.ShrinkRuns}} replayed while shrinking), {{.Steps}} steps</td></tr>
<tr><th>seed</th><td class="mono">{{.Seed}}{{if .Shard}} (shard {{.Shard}}){{end}}</td></tr>
{{if .Merged}}<tr><th>merged shards</th><td>{{join .Merged ", "}}</td></tr>{{end}}
<tr><th>faults</th><td>{{.Faults}}; concurrent actors {{.Concurrent}}</td></tr>
<tr><th>started</th><td>{{.Started.UTC.Format "2006-01-02 15:04:05 UTC"}}, {{printf "%.1f" .Seconds}} s</td></tr>
<tr><th>PostgreSQL</th><td>{{.Environment.Postgres}} ({{.Environment.PostgresSource}})</td></tr>
<tr><th>server settings not at their defaults</th><td class="mono">{{settings .Environment.ServerSettings}}</td></tr>
<tr><th>Go, OS</th><td>{{.Environment.Go}}, {{.Environment.OS}}</td></tr>
<tr><th>outboxcheck</th><td class="mono">{{.Environment.Tool}}</td></tr>
<tr><th>command</th><td class="mono">outboxcheck run {{join .Args " "}}</td></tr>
</table>

<h2>Properties</h2>
<table id="properties">
<tr><th>property</th><th>checked</th><th>verdict</th></tr>
{{range .Properties}}<tr><td><code>{{.Name}}</code></td><td>{{if eq .Kind "safety"}}after every action{{else}}after the drain{{end}}</td><td class="{{.Verdict}}">{{.Verdict}}</td></tr>
{{end}}</table>

<h2>Fault coverage</h2>
<table id="coverage">
<tr><th>fault</th><th>injected</th><th>struck</th><th>affected</th></tr>
{{range $k, $c := .Coverage.Network}}<tr><td>{{$k}}{{if and $c.Injected (not $c.Struck)}} <span class="violated">(never struck)</span>{{end}}</td><td>{{$c.Injected}}</td><td>{{$c.Struck}}</td><td>{{$c.Affected}}</td></tr>
{{end}}<tr><td>broker: refused</td><td>{{.Coverage.BrokerRefused}}</td><td></td><td></td></tr>
<tr><td>broker: ack lost</td><td>{{.Coverage.BrokerAckLost}}</td><td></td><td></td></tr>
{{range $k, $n := .Coverage.Crashes}}<tr><td>crash: {{$k}}</td><td>{{$n}}</td><td></td><td></td></tr>
{{end}}</table>
{{range $k, $why := .Coverage.NotApplicable}}<p>Not applicable: <code>{{$k}}</code>: {{$why}}.</p>{{end}}

{{with .Failure}}
<h2>Counterexample: {{len .Steps}} steps, first failed at check {{.FirstCheck}}</h2>
{{with $.Timeline}}
<div class="timeline">
<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="timeline of the counterexample">
{{range .Lanes}}<line class="lane" x1="{{sub 110 6}}" y1="{{add .Y 17}}" x2="{{$.Timeline.Width}}" y2="{{add .Y 17}}"/><text x="6" y="{{add .Y 21}}">{{.Name}}</text>
{{end}}{{range .Windows}}<rect class="{{.Kind}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Marks}}<g><title>{{.Title}}</title><circle class="step{{if .Failing}} failing{{end}}" cx="{{.X}}" cy="{{.Y}}" r="{{if .Failing}}12{{else}}9{{end}}"/><text class="num" x="{{.X}}" y="{{add .Y 4}}" text-anchor="middle">{{.Label}}</text></g>
{{end}}</svg>
</div>
<p>Shaded: <span style="color:#d1242f">a network fault on that actor's link</span>, <span style="color:#57606a">the actor down</span>. Hover a step for what the subject returned and what the model expected; the failing step is the large red one.</p>
{{end}}
<table id="story">
<tr><th>#</th><th>clock</th><th>action</th><th>actor</th><th>input</th><th>actual</th><th>model</th></tr>
{{$last := len .Steps}}{{range .Steps}}<tr{{if eq .N $last}} class="failing"{{end}}><td>{{.N}}</td><td class="mono">{{.Clock}}</td><td>{{.Action}}</td><td>{{.Actor}}</td><td class="mono">{{.Input}}</td><td class="mono">{{.Result}}</td><td class="mono">{{.Expect}}</td></tr>
{{end}}</table>
<p>Replay it step by step: <code>outboxcheck replay &lt;this directory&gt;</code>.</p>
{{end}}
</body>
</html>
`))

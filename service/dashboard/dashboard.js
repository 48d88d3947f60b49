// The Troupe dashboard: jobs, one job's curves (loss, throughput, the split per group, busy per
// worker, faults and recoveries) and the agents, from the API (live) or from a report file.
// The page records what it drew in <body data-job data-points> for tests.
'use strict';

const view = { selected: null, report: null, charts: {} };
const palette = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563',
                 '#db2777'];

// The API wants the cluster's token as a bearer token. Open the page as /#token=TOKEN (what
// `troupe serve` prints points there); the token is kept for this tab only and taken out of the
// address bar, so it is neither in the history nor sent to the server in a URL.
function apiToken() {
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    sessionStorage.setItem('troupe-token', decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('troupe-token');
}

async function getJSON(url) {
  const token = apiToken();
  const headers = token ? { Authorization: 'Bearer ' + token } : {};
  const r = await fetch(url, { cache: 'no-store', headers });
  if (r.status === 401) {
    document.getElementById('source').textContent =
        'needs the token: open this page as /#token=TOKEN (troupe token prints it)';
  }
  if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
  return r.json();
}

function text(v, digits) {
  if (v === undefined || v === null) return '';
  return typeof v === 'number' && digits !== undefined ? v.toFixed(digits) : String(v);
}

function cell(row, value, cls) {
  const td = row.insertCell();
  td.textContent = value;
  if (cls) td.className = cls;
}

function renderJobs(jobs) {
  const body = document.querySelector('#jobs tbody');
  body.innerHTML = '';
  for (const j of jobs) {
    const row = body.insertRow();
    row.className = 'job' + (j.id === view.selected ? ' selected' : '');
    row.dataset.id = j.id;
    row.onclick = () => { view.selected = j.id; refresh(); };
    cell(row, j.id);
    cell(row, j.state, 'state-' + j.state);
    cell(row, j.steps_total ? text(j.step) + ' / ' + j.steps_total : text(j.step));
    cell(row, text(j.loss, 4));
    cell(row, text(j.samples_per_second, 0));
    cell(row, j.reason || '');
  }
}

function renderAgents(agents) {
  const body = document.querySelector('#agents tbody');
  body.innerHTML = '';
  for (const a of agents) {
    const row = body.insertRow();
    cell(row, a.name);
    cell(row, a.group);
    cell(row, a.count + ' ' + a.device);
    cell(row, a.host + ' (pid ' + a.pid + ')');
    cell(row, a.health + (a.lost_reason ? ': ' + a.lost_reason : ''),
         a.health === 'lost' ? 'state-failed' : 'state-running');
  }
  if (!agents.length) {
    const row = body.insertRow();
    cell(row, 'none joined', 'muted');
  }
}

// One line chart per canvas, made once and updated in place (no animation: it redraws every
// second).
function lineChart(id, datasets, yLabel, extra) {
  const options = {
    animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
    scales: { x: { type: 'linear', title: { display: true, text: 'step' } },
              y: { title: { display: !!yLabel, text: yLabel || '' } } },
    plugins: { legend: { display: datasets.length > 1 } },
  };
  Object.assign(options, extra || {});
  datasets.forEach((d, i) => {
    d.borderColor = d.borderColor || palette[i % palette.length];
    d.backgroundColor = d.backgroundColor || d.borderColor;
    d.pointRadius = d.pointRadius === undefined ? 0 : d.pointRadius;
    d.borderWidth = 1.5;
  });
  let chart = view.charts[id];
  if (!chart) {
    chart = new Chart(document.getElementById(id), { type: 'line', data: { datasets }, options });
    view.charts[id] = chart;
  } else {
    // Options too: an axis' range follows the job (the events chart ends at its last step).
    chart.data.datasets = datasets;
    chart.options = options;
    chart.update('none');
  }
  return chart;
}

const eventKinds = ['fault', 'failure', 'detected', 'recovered', 'restart', 'membership',
                    'rebalance', 'resume'];

function renderSeries(id, series, events) {
  document.getElementById('job-title').textContent = id ? 'Job ' + id : 'No job selected';
  const points = (series && series.points) || [];
  const xs = (f) => points.map((p) => ({ x: p.step, y: f(p) }));
  lineChart('chart-loss', [{ label: 'loss', data: xs((p) => p.loss) }], 'mean loss');
  lineChart('chart-throughput', [{ label: 'samples/s', data: xs((p) => p.samples_per_second) }],
            'samples/s');
  const groups = (series && series.groups) || [];
  lineChart('chart-split', groups.map((g, i) => ({ label: g, data: xs((p) => p.split[i]) })),
            'samples');
  const workers = (series && series.workers) || [];
  lineChart('chart-busy', workers.map((w, i) => ({ label: w, data: xs((p) => p.busy[i]) })),
            'compute / step time', { scales: { x: { type: 'linear', title: { display: true, text: 'step' } },
                                               y: { min: 0, max: 1 } } });
  // Faults and recoveries: one row per kind, at the step it happened.
  const evs = events || [];
  lineChart('chart-events', eventKinds.map((k, i) => ({
    label: k, showLine: false, pointRadius: 4,
    data: evs.filter((e) => e.kind === k).map((e) => ({ x: e.step, y: i })),
  })), '', { scales: { x: { type: 'linear', title: { display: true, text: 'step' }, min: 0,
                           max: points.length ? points[points.length - 1].step : undefined },
                       y: { min: -0.5, max: eventKinds.length - 0.5,
                            // One tick per kind, named (the axis would start at -0.5).
                            afterBuildTicks: (axis) => {
                              axis.ticks = eventKinds.map((k, i) => ({ value: i }));
                            },
                            ticks: { callback: (v) => eventKinds[v] || '' } } } });
  const list = document.getElementById('events-list');
  list.innerHTML = '';
  for (const e of evs) {
    const div = document.createElement('div');
    // The detail often starts with its kind ("failure: ..."): say it once.
    const detail = e.detail.startsWith(e.kind + ':') ? e.detail.slice(e.kind.length + 1) : e.detail;
    div.textContent = 'step ' + e.step + '  ' + e.kind + ': ' + detail.trim();
    list.appendChild(div);
  }
  if (!evs.length) list.textContent = 'none';
  document.body.dataset.job = id || '';
  document.body.dataset.points = String(points.length);
}

async function refresh() {
  try {
    if (view.report) {
      const jobs = view.report.jobs.map((j) => ({ id: j.name, state: j.status, step: j.steps,
        loss: j.train_loss, samples_per_second: j.samples_per_second, reason: j.error || '' }));
      if (!view.selected && jobs.length) view.selected = jobs[0].id;
      renderJobs(jobs);
      const job = view.report.jobs.find((j) => j.name === view.selected);
      renderSeries(view.selected, job && job.series, job && job.events);
      renderAgents(view.report.agents || []);
      return;
    }
    const jobs = (await getJSON('api/v1/jobs')).jobs;
    if (!view.selected || !jobs.some((j) => j.id === view.selected)) {
      const running = jobs.find((j) => j.state === 'running');
      view.selected = running ? running.id : (jobs.length ? jobs[0].id : null);
    }
    renderJobs(jobs);
    if (view.selected) {
      const s = await getJSON('api/v1/jobs/' + encodeURIComponent(view.selected) + '/series');
      renderSeries(view.selected, s.series, s.events);
    }
    renderAgents((await getJSON('api/v1/agents')).agents);
    document.getElementById('source').textContent = 'live';
  } catch (e) {
    document.getElementById('source').textContent = 'live: ' + e.message;
  }
}

document.getElementById('report-file').addEventListener('change', async (ev) => {
  const file = ev.target.files[0];
  if (!file) return;
  view.report = JSON.parse(await file.text());
  view.selected = null;
  document.getElementById('source').textContent = 'report: ' + file.name;
  refresh();
});

// `troupe plot` writes the page with the report in it: no server to poll.
if (window.TROUPE_REPORT) {
  view.report = window.TROUPE_REPORT;
  document.getElementById('source').textContent = 'report: ' + (window.TROUPE_REPORT_NAME || '');
  refresh();
} else {
  refresh();
  setInterval(refresh, 1000);
}

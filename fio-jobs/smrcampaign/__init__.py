# SPDX-License-Identifier: GPL-2.0
"""fio workload campaigns on emulated SMR devices (fio-jobs/campaign).

A campaign is a matrix (an INI file, docs/campaigns.md): jobs x devices x
parameters. For every cell the runner creates the device (smrctl, or
dmsetup when smrctl is missing), optionally makes and mounts a file
system, runs one fio job file with JSON output and per-second bandwidth
logs while it samples ``dmsetup status`` and records smrd's events, waits
for cleaning (``smrctl wait-clean``, or by polling the status), removes
the device, and at the end writes one results directory: a summary
(CSV, JSON, text) and the plots.

The modules, each importing only those above it:

    model     device models, dm status lines, a run's status/event timelines
    matrix    the matrix file: sections, keys, ${VAR}s, runs; sizes
    fiolog    fio's JSON output (json+), bandwidth and latency histogram logs
    summary   a run's figures from its files; summary.csv/json/txt
    plots     the figures (matplotlib; imports model only)
    devices   creating, sampling, cleaning and removing devices; run_cmd
    fiorun    the job file as run, running fio, the progress line
    array     md arrays of emulated drives: build, fail, rebuild, check
    runner    Campaign: one run after another, then plots and summary
    cli       the command line (argparse) and --plot

Only the standard library is used, matplotlib only in plots.
"""

//! The training-path family: scenario files drawn from ranges around the measured figures, for
//! training a policy on paths that are none of the shipped evaluation scenarios.
//!
//! Why: a policy trained on the eight shipped scenarios (`traces/scenarios/`) would be scored on
//! the paths it was fitted to. [`draw_paths`] instead draws `count` generated scenarios from six
//! families, each a mixture of the kinds of path the shipped files stand for, with every number
//! drawn from a range that contains the measured figure and reaches well beyond it, so that a
//! policy sees paths unlike any one trace (docs/path-family.md). The files use generated kinds
//! only (capacity log-normal per slot or per second with optional stalls, delay constant or
//! slotted, loss none, Bernoulli or Gilbert-Elliott, handovers none, slots or grid): a training
//! path never replays a data file, so it neither needs `../shared/data` nor copies a trace into
//! training.
//!
//! Pure and deterministic: path `i` of seed `s` is drawn from its own ChaCha8 stream
//! ([`crate::rng::stream`] with the label `path-family/<i>`), so the same seed gives the same
//! bytes on every run and platform, and the first 10 paths of `--count 40` are those of
//! `--count 10`. [`GENERATOR_VERSION`] changes whenever a draw changes.
//!
//! # Families
//!
//! | family | weight | what it stands for | handovers |
//! |---|---|---|---|
//! | `leo-lossy` | 0.20 | Starlink-like: boundaries lose packets (`lagos.csv` uplink) | slots (3 in 4) or a 15-s grid |
//! | `leo-phased` | 0.10 | Starlink over inter-satellite links: loss at a phase of the slot away from the boundary (the mmsys24 Lagos ISL ping trace) | slots (3 in 4) or a 15-s grid |
//! | `leo-spiky` | 0.20 | LeoCC-like: boundaries bring delay spikes and a short delivery gap, no loss | a 15-s grid (1 in 2) or slots |
//! | `leo-bursty` | 0.20 | `lagos.csv`-like heavy loss away from boundaries: Gilbert-Elliott bursts, capacity dips | slots |
//! | `leo-sparse` | 0.10 | sparse LEO: rare handovers, an outage at each | slots at a low switch rate |
//! | `terrestrial` | 0.20 | LTE/5G/broadband: per-second capacity, stalls, loss, jitter | none |
//!
//! Choices inside a family: `leo-lossy` and `leo-phased` use the 15-s grid with probability
//! 0.25, `leo-spiky` with 0.5; `terrestrial` has stalls with probability 0.5 and its forward loss
//! is none (0.4), Bernoulli (0.3) or Gilbert-Elliott (0.3).
//!
//! Rare handovers come from a low slot switch rate, not from a grid with a long period: the
//! calibrated forecast (`--handover calibrated`) reads a grid from the call's first two
//! boundaries and takes a call with only one boundary to be on Starlink's 15-s grid, so a
//! 60-300-s grid would give it phantom handovers on any call shorter than two periods. The slot
//! grid at a low rate is what it models: every boundary a candidate, the site's rate learned.
//!
//! Held fixed in every family: the call (30 fps, 50 / 300 / 2500 kbit/s, as the shipped
//! scenarios), the grid period (15 s, reference C1), the reverse buffer (250 ms: the feedback
//! direction never fills it), the jitter's 10-ms autocorrelation on slotted delays (0.83, the
//! starlink fit), the LEO reverse capacity's autocorrelation (0) and within-slot spread (0.058,
//! the LeoCC fit), and the clamps derived from each drawn median (below).
//!
//! # Ranges
//!
//! Every drawn number, its range, how it is drawn (uniform or log-uniform), the measured figure
//! it is built around with the file it comes from, and why the range is as wide as it is. Figures
//! marked "measured" come from `scripts/path-family-figures.py` over `../shared/data`; the rest
//! are the shipped scenario files' own header figures (`traces/scenarios/*.toml`). A name with
//! dots and no `~` is the scenario file's field; `~` marks a number the field is computed from. References
//! C1, C2 and C5 are those of `../shared/reference/starlink-dish-and-orbits.md`, as in the
//! shipped headers.
//!
//! | family | parameter | range | draw | measured figure (file) | widening |
//! |---|---|---|---|---|---|
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `~start_offset_s` | 0 - 59 | uniform | slot boundaries at seconds 12/27/42/57 of each UTC minute (reference C1; lagos.csv virtual seconds 12/27/42/57) | `start` at second 0-59 of a minute: the boundaries fall at any phase of the decision interval, where every shipped file starts on the minute |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty | `handovers.probability` | 0.45 - 0.95 | uniform | share of slot boundaries that change satellite: Brisbane 0.845, Kanazawa 0.576, Louvain 0.769, pooled 0.74 (SatInView logs, docs/architecture.md "The calibrated predictor") | about 0.13 past the lowest and the highest site: sites unlike the three logged |
//! | leo-lossy, leo-phased, leo-spiky | `handovers.first_ms` | 1000 - 15000 | uniform | LeoCC's spikes every 15 s from 8 750 ms (starlink/leocc/delay_example_10ms.txt, leocc-trace header) | grid variant only: any phase within one 15-s slot |
//! | leo-sparse | `handovers.probability` | 0.02 - 0.25 | uniform | sparse-leo: 0.15-0.16 handovers per minute per terminal (sparse-leo header); the paper's "approximately 0-1 per minute" | 0.02-0.25 of 4 boundaries a minute is 0.08-1.0 handovers a minute: from half the measured rate to the paper's upper figure |
//! | leo-lossy, leo-phased | `forward.capacity.median_mbps` | 3.84 - 15.36 | log-uniform | uplink slot means' geometric mean 7.68 Mbit/s (lagos.csv, starlink header) | x0.5 to x2: uplinks slower and faster than the one trace |
//! | leo-lossy, leo-phased | `forward.capacity.sigma_log` | 0.3 - 1 | uniform | log sd of the uplink slot means 0.65 (lagos.csv, starlink header) | x0.46 to x1.5: steadier and rougher slot-to-slot reallocation |
//! | leo-lossy, leo-phased | `forward.capacity.rho` | 0.6 - 0.95 | uniform | slot lag-1 autocorrelation 0.855 (lagos.csv, starlink header) | 0.25 below to 0.1 above: slot levels that forget faster |
//! | leo-lossy, leo-phased | `forward.capacity.within_sigma_log` | 0.1 - 0.3 | uniform | per-second log sd inside a slot 0.18-0.22 (lagos.csv, starlink header) | x0.5 to x1.4 |
//! | leo-spiky | `forward.capacity.median_mbps` | 3 - 60 | log-uniform | 7.68 Mbit/s (lagos.csv uplink) and 46.3 (starlink/leocc/bw_example.mahimahi whole-slot geometric mean), starlink header | x0.4 of the lower to x1.3 of the higher: from a bottleneck below the video's 2.5 Mbit/s cap to none |
//! | leo-spiky | `forward.capacity.sigma_log` | 0.1 - 0.7 | uniform | slot log sd 0.18 (bw_example.mahimahi) and 0.65 (lagos.csv), starlink header | x0.55 of the lower to x1.1 of the higher |
//! | leo-spiky | `forward.capacity.rho` | 0 - 0.9 | uniform | slot autocorrelation 0 (bw_example.mahimahi, too few slots to fit) and 0.855 (lagos.csv), starlink header | covers both |
//! | leo-spiky | `forward.capacity.within_sigma_log` | 0.03 - 0.25 | uniform | within-slot per-second spread 0.058 (bw_example.mahimahi CV) and 0.18-0.22 (lagos.csv), starlink header | x0.5 of the lower to x1.1 of the higher |
//! | leo-bursty | `forward.capacity.median_mbps` | 2 - 13 | log-uniform | measured: uplink per-second median 6.45 Mbit/s (lagos.csv) | x0.3 to x2: down to uplinks near the video's own rate |
//! | leo-bursty | `forward.capacity.sigma_log` | 0.4 - 1 | uniform | measured: log sd of the uplink per second 0.70 (lagos.csv) | x0.57 to x1.4 |
//! | leo-bursty | `forward.capacity.rho` | 0.8 - 0.97 | uniform | measured: lag-1 autocorrelation of the uplink per second 0.93 (lagos.csv) | 0.13 below to 0.04 above (the process needs < 1) |
//! | leo-bursty | `forward.capacity.stall.enter_per_s` | 0.002 - 0.03 | log-uniform | measured: 0.5 % of uplink seconds under a quarter of the median, in runs of 3.9 s: 0.0013 entries per second (lagos.csv) | x1.5 to x23: this family is the heavy end, dips several times a minute at most |
//! | leo-bursty | `forward.capacity.stall.mean_s` | 1 - 6 | uniform | measured: the dips last 3.9 s on average (lagos.csv) | x0.26 to x1.5 |
//! | leo-bursty | `forward.capacity.stall.mbps` | 0.05 - 0.5 | log-uniform | measured: slowest uplink second 0.11 Mbit/s (lagos.csv) | x0.45 to x4.5: from a near outage to a dip the 50-kbit/s minimum video still fits |
//! | leo-sparse | `forward.capacity.median_mbps` | 2 - 50 | log-uniform | LEO access rates 7.68 (lagos.csv uplink) and 46.3 Mbit/s (bw_example.mahimahi), starlink header; sparse-leo's 1 Gbit/s is StarryNet's link rate, never a bottleneck | x0.26 of the lower to x1.1 of the higher: the bottleneck is the access link, as on a real sparse constellation |
//! | leo-sparse | `forward.capacity.sigma_log` | 0.05 - 0.6 | uniform | not fitted (no sparse-LEO capacity trace in ../shared/data); 0.05 (broadband) to 0.65 (lagos.csv slots) bracket it | the bracket |
//! | leo-sparse | `forward.capacity.rho` | 0.5 - 0.95 | uniform | per-second autocorrelation 0.52-0.93 (Mahimahi LTE, lagos.csv measured) | the bracket |
//! | terrestrial | `forward.capacity.median_mbps` | 1 - 60 | log-uniform | LTE uplink per-trace means 1.9-13.3 Mbit/s, pooled median 4.01 (terrestrial/mahimahi/*.up), 5G 26.7 (terrestrial/5g-ucc), broadband 20 (not fitted); terrestrial-* headers | x0.5 of the slowest LTE trace to x2.2 of 5G |
//! | terrestrial | `forward.capacity.sigma_log` | 0.05 - 1.3 | uniform | per-second log sd 0.05 (broadband, not fitted), 0.90 (LTE up), 1.19 (5G; 1.13-1.43 per drive); terrestrial-* headers | from broadband to x1.1 of 5G |
//! | terrestrial | `forward.capacity.rho` | 0.5 - 0.95 | uniform | lag-1 autocorrelation 0.518-0.889 (LTE up), 0.76 (5G), 0.9 (broadband); terrestrial-* headers | 0.02 below the lowest to 0.06 above the highest |
//! | terrestrial | `forward.capacity.stall.enter_per_s` | 0.005 - 0.08 | log-uniform | 5G 0.077 per second (5g-ucc, terrestrial-5g header); measured: LTE uplink seconds under a tenth of the median 1.4-9.1 % in runs of 1.0-1.8 s, 0.014-0.056 per second (terrestrial/mahimahi/*.up) | x0.36 of the lowest LTE to 1.04 x 5G |
//! | terrestrial | `forward.capacity.stall.mean_s` | 1 - 4 | uniform | 5G stalls 2.5 s (2.1-3.5 per drive), 5g-ucc; measured: LTE 1.0-1.8 s (mahimahi) | x1 of the shortest to x1.15 of the longest |
//! | terrestrial | `forward.capacity.stall.mbps` | 0.05 - 0.3 | log-uniform | 5G stall rate 0.1 Mbit/s (most stalled seconds carry less), terrestrial-5g header | x0.5 to x3 |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.capacity.median_mbps` | 20 - 100 | log-uniform | downlink 46.3 Mbit/s (bw_example.mahimahi) and row median 91.5 (lagos.csv), starlink header and ../shared/data/README.md | x0.43 of the lower to x1.1 of the higher; feedback never fills it |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.capacity.sigma_log` | 0.1 - 0.5 | uniform | downlink slot log sd 0.18 (bw_example.mahimahi), starlink header | x0.55 to x2.8 |
//! | terrestrial | `reverse.capacity.median_mbps` | 2 - 100 | log-uniform | LTE downlink pooled median 5.62 Mbit/s (mahimahi *.down), 5G 26.7, broadband 100 (not fitted); terrestrial-* headers | x0.36 of LTE to x1 of broadband |
//! | terrestrial | `reverse.capacity.sigma_log` | 0.05 - 1.3 | uniform | as the forward direction (LTE down 0.776) | as the forward direction |
//! | terrestrial | `reverse.capacity.rho` | 0.5 - 0.95 | uniform | LTE downlink 0.558-0.760, 5G 0.76, broadband 0.9; terrestrial-* headers | as the forward direction |
//! | leo-lossy, leo-bursty | `forward.delay.median_ms` | 20 - 120 | log-uniform | uplink slot median one-way delay 80.0 ms (lagos.csv, starlink header); measured: ping RTT p50 43 ms bent-pipe (mmsys24 Seattle), 109 ms via ISLs (mmsys24 Lagos) | from the bent pipe's 21 ms one-way to x1.5 of lagos.csv |
//! | leo-spiky | `forward.delay.median_ms` | 8 - 80 | log-uniform | measured: one-way delay median 11 ms (starlink/leocc/delay_example_10ms.txt); 80.0 ms (lagos.csv) | x0.7 of LeoCC to x1 of lagos.csv |
//! | leo-sparse | `forward.delay.median_ms` | 20 - 150 | log-uniform | one-way delay of an ISL path over thousands of km, 20-150 ms (sparse-leo header, SGP4 geometry) | the figure's range |
//! | leo-phased | `forward.delay.median_ms` | 22 - 110 | log-uniform | measured: ping RTT p50 109 ms via ISLs (starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt) and 43 ms bent-pipe (starlink/mmsys24/no-isl-ping-gw-seattle-230911-170535-0.1s-60min.txt): 54.5 and 21.5 ms one-way | from the bent pipe's one-way (a path over ISLs is no shorter) to x2 of the Lagos ISL path's (its RTT p95 208 ms: longer ISL routes) |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `forward.delay.sigma_log` | 0.15 - 0.5 | uniform | log sd of the slot median delay 0.339 uplink, 0.412 downlink (lagos.csv, starlink header) | x0.44 to x1.2 |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `forward.delay.rho` | 0.2 - 0.6 | uniform | per-handover autocorrelation 0.39 uplink, 0.31 downlink (lagos.csv, starlink header) | 0.11-0.19 beyond the two |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `forward.delay.jitter_ms` | 1 - 10 | uniform | within-slot delay sd 6.8 ms per 100-ms row (lagos.csv); ping RTT changes 6.5 ms (Lagos) and 11.5 ms (Seattle) away from boundaries (mmsys24); fitted 5 ms; starlink header | x0.2 to x2 of the fit |
//! | leo-lossy, leo-phased, leo-bursty | `forward.delay.spike_min_ms` | 20 - 80 | uniform | measured: uplink delay of a boundary's first row over the slot median, per boundary p25 46, p50 75, p90 122 ms (lagos.csv); fitted 50-150 ms (starlink header) | x0.43 of p25 to x1.1 of p50 for the smallest spike |
//! | leo-lossy, leo-phased, leo-bursty | `~forward.delay.spike_span_ms` | 20 - 100 | uniform | the p25-p90 spread of the same figure, 76 ms (lagos.csv, measured) | x0.26 to x1.3 |
//! | leo-lossy, leo-phased, leo-bursty | `forward.delay.spike_max_ms` | 40 - 180 | derived | spike_min + span | derived |
//! | leo-lossy, leo-phased, leo-bursty | `forward.delay.spike_duration_ms` | 60 - 200 | uniform | fitted 120 ms (lagos.csv rows 0-1 after a boundary: +75 and +16 ms, starlink header); reference C2: about 140 ms | x0.5 to x1.4 of the longer |
//! | leo-spiky | `forward.delay.spike_min_ms` | 15 - 60 | uniform | measured: LeoCC spikes 21-58 ms over the slot median (delay_example_10ms.txt); reference C2 +30-50 ms | x0.7 of the smallest to the largest |
//! | leo-spiky | `~forward.delay.spike_span_ms` | 10 - 60 | uniform | the spread of the LeoCC spikes, 37 ms (measured) | x0.27 to x1.6 |
//! | leo-spiky | `forward.delay.spike_max_ms` | 25 - 120 | derived | spike_min + span | derived |
//! | leo-spiky | `forward.delay.spike_duration_ms` | 30 - 200 | uniform | measured: LeoCC spikes last 20-110 ms above base + 10 ms (delay_example_10ms.txt); reference C2 about 140 ms | x1.5 of the shortest to x1.4 of C2 |
//! | leo-sparse | `forward.delay.spike_min_ms` | 0 - 40 | uniform | StarryNet emulates propagation only (no spike, sparse-leo header); LeoCC spikes 21-58 ms (measured) | from none to LeoCC's |
//! | leo-sparse | `~forward.delay.spike_span_ms` | 0 - 40 | uniform | as spike_min | as spike_min |
//! | leo-sparse | `forward.delay.spike_max_ms` | 0 - 80 | derived | spike_min + span | derived |
//! | leo-sparse | `forward.delay.spike_duration_ms` | 0 - 200 | uniform | none (StarryNet) to about 140 ms (reference C2) | x1.4 of C2 |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `~reverse.delay.median_ratio` | 0.8 - 1.25 | uniform | downlink over uplink slot median delay 80.3 / 80.0 ms (lagos.csv, starlink header) | either direction up to a quarter longer |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.sigma_log` | 0.15 - 0.5 | uniform | as forward.delay.sigma_log | as forward.delay.sigma_log |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.rho` | 0.2 - 0.6 | uniform | as forward.delay.rho | as forward.delay.rho |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.correlation` | 0.5 - 0.9 | uniform | correlation of the two directions' slot medians 0.74 (lagos.csv, starlink header) | 0.24 below to 0.16 above |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.jitter_ms` | 1 - 10 | uniform | as forward.delay.jitter_ms | as forward.delay.jitter_ms |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.spike_min_ms` | 10 - 40 | uniform | downlink spikes 20-45 ms for 100 ms (bw_example/delay_example, starlink header); measured: lagos.csv downlink first-row rise p75 11, p90 54 ms | x0.5 of the smallest to x0.9 of the largest |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `~reverse.delay.spike_span_ms` | 10 - 40 | uniform | the 25-ms spread of the fit | x0.4 to x1.6 |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.spike_max_ms` | 20 - 80 | derived | spike_min + span | derived |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `reverse.delay.spike_duration_ms` | 50 - 150 | uniform | fitted 100 ms (starlink header) | x0.5 to x1.5 |
//! | terrestrial | `forward.delay.ms` | 8 - 60 | log-uniform | one-way 12 ms (broadband, not fitted), 37 ms (5G ping RTT median 74), 44.5 ms (LTE, RTT 89); 5g-ucc, terrestrial-* headers | x0.67 of broadband to x1.35 of LTE |
//! | terrestrial | `forward.delay.jitter_ms` | 0.5 - 8 | uniform | 1.0, 1.4, 3.5 ms fitted; measured: ping RTT sd p90 5.0 ms (5G), 12.0 ms (LTE), 5g-ucc | x0.5 of the smallest fit to x0.94 of LTE's p90 per direction (12 / sqrt 2) |
//! | terrestrial | `forward.delay.jitter_rho` | 0.8 - 0.95 | uniform | 0.9, not fitted (the datasets sample once per second); terrestrial-* headers | +-0.1 around it, capped at 0.95 |
//! | leo-lossy | `forward.loss.rate` | 0 - 0.015 | uniform | uplink loss inside slots 0.50 % (lagos.csv rows 10-139, starlink header); reference C2 1-2 % non-congestive | x0 to x3: from none to the top of C2 |
//! | leo-phased | `forward.loss.rate` | 0 - 0.005 | uniform | measured: 0.15 % of the echoes outside the lossy phase (0.0-0.3 % per half second of the slot, 0.6-0.7 % in the second after the phase), 0.47 % overall with it (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt; docs/experiments/mmsys24-2026-12-06.md) | x0 to x3.3: from none to about the trace's overall rate, so that the phase still loses at least 4 times the rest of the slot |
//! | leo-lossy, leo-phased, leo-bursty | `reverse.loss.rate` | 0 - 0.01 | uniform | downlink loss inside slots 0.49 % (lagos.csv, starlink header) | x0 to x2 |
//! | leo-spiky | `forward.loss.rate` | 0 - 0.002 | uniform | no loss in the LeoCC traces (leocc-trace) | up to x0.4 of lagos.csv's 0.50 %: never more than a trace of random loss |
//! | leo-spiky | `reverse.loss.rate` | 0 - 0.002 | uniform | as forward.loss.rate | as forward.loss.rate |
//! | leo-sparse | `forward.loss.rate` | 0 - 0.02 | uniform | 1 % per link, as StarryNet and the paper configure (sparse-leo header) | x0 to x2 |
//! | leo-sparse | `reverse.loss.rate` | 0 - 0.02 | uniform | as forward.loss.rate | as forward.loss.rate |
//! | terrestrial | `forward.loss.rate` | 0.0005 - 0.02 | log-uniform | measured: 2.5 % of 5G and 4.9 % of LTE ping batches lost anything (5g-ucc); Mahimahi traces carry no random loss | from a trace of loss to reference C2's 2 %: lossy terrestrial paths the data barely shows |
//! | leo-bursty | `~forward.loss.bad_share` | 0.01 - 0.1 | log-uniform | measured: 3.8 % of uplink and 2.0 % of downlink rows inside slots lose packets (lagos.csv) | x0.26 to x2.6 of the uplink: up to one packet in ten sent in a burst |
//! | leo-bursty | `forward.loss.p_bad_to_good` | 0.01 - 0.1 | log-uniform | measured: lossy runs last 1.19 rows (uplink) and 2.38 rows (downlink) of 100 ms (lagos.csv), 30-60 packets at 2.5 Mbit/s in 1 200-byte packets | mean bursts of 10-100 packets |
//! | leo-bursty | `forward.loss.p_good_to_bad` | 0.0001 - 0.0112 | derived | bad share x p_bad_to_good / (1 - bad share) | derived |
//! | leo-bursty | `forward.loss.loss_bad` | 0.1 - 0.5 | uniform | measured: mean loss of a lossy row 13.3 % uplink, 24.4 % downlink, p90 44 % (lagos.csv) | x0.75 of the uplink to x1.1 of the downlink p90 |
//! | leo-bursty | `forward.loss.loss_good` | 0 - 0.025 | uniform | measured: ping loss 0.47 % via ISLs (mmsys24 Lagos), 2.54 % bent-pipe (mmsys24 Seattle), 94-97 % of it single pings | x0 to x1 of Seattle: independent loss on top of the bursts |
//! | terrestrial | `~forward.loss.bad_share` | 0.005 - 0.05 | log-uniform | measured: 2.5 % (5G) and 4.9 % (LTE) of ping batches lost anything (5g-ucc) | x0.2 of 5G to x1 of LTE |
//! | terrestrial | `forward.loss.p_bad_to_good` | 0.005 - 0.05 | log-uniform | the lossy batches are outages of about a second (5g-ucc, terrestrial-lte header): 20-200 packets | mean bursts of 20-200 packets |
//! | terrestrial | `forward.loss.p_good_to_bad` | 0.000025 - 0.00264 | derived | bad share x p_bad_to_good / (1 - bad share) | derived |
//! | terrestrial | `forward.loss.loss_bad` | 0.2 - 0.6 | uniform | measured: a lossy ping batch loses 30 % at the median (5g-ucc, 5G and LTE) | x0.67 to x2 |
//! | terrestrial | `forward.loss.loss_good` | 0 - 0.002 | uniform | none in 97-98 % of ping batches (5g-ucc) | a trace of independent loss |
//! | leo-lossy, leo-bursty | `forward.handover.boundary_loss_profile[0]` | 0.05 - 0.7 | uniform | measured: uplink loss in the first 100-ms row after a boundary, mean 47.5 %, per boundary p25 30, p50 50, p90 70 % (lagos.csv); starlink header 47.48 % | from weak boundaries (x0.1 of the mean) to the p90 |
//! | leo-lossy, leo-bursty | `~forward.handover.row1_ratio` | 0.1 - 0.6 | uniform | row 1 over row 0: 20.34 / 47.48 = 0.43 (lagos.csv uplink, starlink header) | x0.23 to x1.4 |
//! | leo-lossy, leo-bursty | `forward.handover.boundary_loss_profile[1]` | 0.005 - 0.42 | derived | row 0 x row1_ratio | derived |
//! | leo-lossy, leo-bursty | `~forward.handover.row2_ratio` | 0.05 - 0.4 | uniform | row 2 over row 1: 3.75 / 20.34 = 0.18 (lagos.csv uplink) | x0.27 to x2.2 |
//! | leo-lossy, leo-bursty | `forward.handover.boundary_loss_profile[2]` | 0.00025 - 0.168 | derived | row 1 x row2_ratio | derived |
//! | leo-lossy, leo-bursty | `~forward.handover.row3_ratio` | 0.2 - 0.8 | uniform | row 3 over row 2: 1.92 / 3.75 = 0.51 (lagos.csv uplink) | x0.4 to x1.6 |
//! | leo-lossy, leo-bursty | `forward.handover.boundary_loss_profile[3]` | 0.00005 - 0.1344 | derived | row 2 x row3_ratio | derived |
//! | leo-lossy, leo-bursty | `reverse.handover.boundary_loss_profile[0]` | 0 - 0.06 | uniform | downlink loss in the first row after a boundary 2.64 % (lagos.csv, starlink header); measured: 94 % of boundaries lose nothing there | x0 to x2.3 |
//! | leo-lossy, leo-bursty | `~reverse.handover.row1_ratio` | 0.2 - 1 | uniform | row 1 over row 0: 1.93 / 2.64 = 0.73 (lagos.csv downlink) | x0.27 to x1.4 |
//! | leo-lossy, leo-bursty | `reverse.handover.boundary_loss_profile[1]` | 0 - 0.06 | derived | row 0 x row1_ratio | derived |
//! | leo-phased | `~phase_start_s` | 1 - 12 | uniform | measured: the echoes sent 4.0-5.0 s after each reconfiguration (seconds 16-17, 31-32, 46-47, 1-2 of the UTC minute) lose 5.5 and 4.9 %, every other half second 0.0-0.7 % (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt; docs/experiments/mmsys24-2026-12-06.md); one decimal, the 100-ms row | any phase from the first second on (clear of the boundary itself) whose longest phase still ends by 14.5 s, the end of the last half-second bin the sender's phase detector tests |
//! | leo-phased | `~phase_length_s` | 0.5 - 2.5 | uniform | measured: 1.0 s, the two lossy half seconds 4.0-5.0 s after each reconfiguration (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt) | x0.5 to x2.5: from one half-second bin of the phase detector to five |
//! | leo-phased | `~phase_loss` | 0.02 - 0.15 | log-uniform | measured: 4.9-5.5 % of the echoes sent in the phase lost (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt; docs/experiments/mmsys24-2026-12-06.md); the same rows at every slot boundary, handover or not, as the trace's phase follows every reconfiguration | x0.4 to x2.7: from 4 times the highest random loss to about a packet in seven |
//! | leo-spiky | `forward.handover.outage_ms` | 30 - 180 | uniform | measured: the capacity trace delivers nothing for 59-135 ms (mean 82) at each of its 8 slot boundaries, with the delay spike (starlink/leocc/bw_example.mahimahi); the same value both directions, as leocc-trace replays one file both ways | x0.5 of the shortest to x1.33 of the longest |
//! | leo-sparse | `forward.handover.outage_ms` | 0 - 2500 | uniform | 2-s routing outage after a change of serving satellite (1-3 s with bird's 1-s hello and SPF tick), starrynet-sparse header; the same value both directions | from an instant handover to x1.25 |
//! | leo-lossy, leo-phased, leo-spiky, leo-bursty, leo-sparse | `forward.buffer_ms` | 100 - 500 | log-uniform | 250 ms at the median rate, not fitted (starlink header: lagos.csv one-way delay reaches 486 ms uplink) | x0.4 to x2: shallow and deep queues |
//! | terrestrial | `forward.buffer_ms` | 50 - 500 | log-uniform | 100 ms (broadband), 250 ms (LTE, 5G; Mahimahi's drop-tail queues of a few hundred ms); not fitted | x0.5 of broadband to x2 of LTE |
//!
//! Derived, not drawn: a slot-stepped capacity is clamped to `[median / 4, median x 4]` (the
//! starlink fit's 2.0 and 32.0 around 7.68); a per-second capacity to
//! `[max(0.05, median e^(-3 sigma)), median e^(3 sigma)]`; a slotted delay to
//! `[0.47, 2.45] x median` forward and `[0.39, 3.9] x median` reverse (lagos.csv's 37.5-196 ms
//! around 80.0 and 31-312 around 80.3); a spike's maximum is its minimum plus the drawn span; a
//! Gilbert-Elliott chain's `p_good_to_bad` is `bad share x p_bad_to_good / (1 - bad share)`, so
//! that the bad state holds the drawn share of packets; row `k` of a boundary loss profile is
//! row `k - 1` times the drawn ratio; a `leo-phased` profile is zero for `~phase_start_s` and
//! `~phase_loss` for `~phase_length_s` (100-ms rows), and ends there.

use super::schema::{
    CallSpec, CapacitySpec, DelaySpec, DirectionSpec, HandoverEffectSpec, HandoverSpec,
    LognormalSpec, LossSpec, ScenarioFile, ScenarioKind, SlottedDelaySpec, StallSpec, Step,
};
use super::schema::{LOSS_PROFILE_ROW_MS, MAX_LOSS_PROFILE_ROWS};
use crate::link::OutageMode;
use crate::rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Version of the draws: bumped whenever the same seed would give other files.
pub const GENERATOR_VERSION: u32 = 3;

/// Most paths one call may draw (`path-0000` .. `path-9999`).
pub const MAX_PATHS: usize = 10_000;

/// The slot grid's period, ms (reference C1: Starlink reconfigures every 15 s).
const SLOT_MS: u64 = 15_000;

/// The call every path carries: the shipped scenarios' (libwebrtc's 720p limits).
const FPS: u32 = 30;
const MIN_KBPS: u32 = 50;
const START_KBPS: u32 = 300;
const MAX_KBPS: u32 = 2_500;

/// One family of paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    /// Starlink-like: slot boundaries that lose packets.
    LeoLossy,
    /// Starlink over inter-satellite links: loss at a later phase of every slot, not at the
    /// boundary.
    LeoPhased,
    /// LeoCC-like: boundaries with delay spikes, a short delivery gap and no loss.
    LeoSpiky,
    /// lagos.csv-like: bursty loss away from boundaries too, capacity dips.
    LeoBursty,
    /// Sparse LEO: rare handovers.
    LeoSparse,
    /// Terrestrial: no handovers.
    Terrestrial,
}

impl Family {
    /// Every family, in the order of [`Family::weight`]'s cumulative draw.
    pub const ALL: [Family; 6] = [
        Family::LeoLossy,
        Family::LeoPhased,
        Family::LeoSpiky,
        Family::LeoBursty,
        Family::LeoSparse,
        Family::Terrestrial,
    ];

    /// The name in file descriptions and `family.json`.
    pub fn name(self) -> &'static str {
        match self {
            Family::LeoLossy => "leo-lossy",
            Family::LeoPhased => "leo-phased",
            Family::LeoSpiky => "leo-spiky",
            Family::LeoBursty => "leo-bursty",
            Family::LeoSparse => "leo-sparse",
            Family::Terrestrial => "terrestrial",
        }
    }

    /// Mixture weight (the weights sum to 1). Starlink-like lossy slots get the largest share
    /// together (0.30), since the slot is what a handover-aware policy acts on; that share is
    /// split between loss at the boundary (`leo-lossy`, 0.20: lagos.csv's uplink) and loss at a
    /// later phase of the slot (`leo-phased`, 0.10: the mmsys24 Lagos ISL ping trace, the one
    /// real path in ../shared/data that loses there), so that a policy meets both and learns
    /// which one a path has. Sparse LEO gets the smallest, since its rare handovers leave most
    /// of a call terrestrial-like. `leo-phased` follows `leo-lossy` in [`Family::ALL`] and takes
    /// the top of its former interval of the cumulative draw, so a path of every other family
    /// draws what it drew under generator version 2 (docs/path-family.md, version 3).
    pub fn weight(self) -> f64 {
        match self {
            Family::LeoLossy | Family::LeoSpiky | Family::LeoBursty | Family::Terrestrial => 0.20,
            Family::LeoPhased | Family::LeoSparse => 0.10,
        }
    }
}

/// How a range is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Uniform in `[lo, hi]`.
    Linear,
    /// Uniform in log space: each factor of two is as likely (for rates and delays that span
    /// more than a factor of ten).
    Log,
    /// Computed from other draws; the range is what those draws allow.
    Derived,
}

/// One drawn number's range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// The scenario file's dotted field (`forward.capacity.median_mbps`), or a `~name` the field
    /// is computed from.
    pub name: &'static str,
    /// Lowest value.
    pub lo: f64,
    /// Highest value.
    pub hi: f64,
    /// How it is drawn.
    pub scale: Scale,
    /// Decimal places it is rounded to (the file shows no more).
    pub decimals: i32,
}

impl Span {
    const fn lin(name: &'static str, lo: f64, hi: f64, decimals: i32) -> Self {
        Self {
            name,
            lo,
            hi,
            scale: Scale::Linear,
            decimals,
        }
    }

    const fn log(name: &'static str, lo: f64, hi: f64, decimals: i32) -> Self {
        Self {
            name,
            lo,
            hi,
            scale: Scale::Log,
            decimals,
        }
    }

    const fn derived(name: &'static str, lo: f64, hi: f64, decimals: i32) -> Self {
        Self {
            name,
            lo,
            hi,
            scale: Scale::Derived,
            decimals,
        }
    }

    /// Whether `name` is a field of the scenario file (not a `~` number it is computed from).
    pub fn is_field(&self) -> bool {
        !self.name.starts_with('~')
    }

    /// `value` rounded to [`Span::decimals`] and kept in `[lo, hi]` (rounding a value drawn at
    /// an end of the range must not leave it).
    fn settle(&self, value: f64) -> f64 {
        let scale = 10f64.powi(self.decimals);
        ((value * scale).round() / scale).clamp(self.lo, self.hi)
    }
}

/// One row of the range table: a span, the families that draw it, and its provenance.
#[derive(Debug, Clone, Copy)]
pub struct RangeRow {
    /// The families that draw this span.
    pub families: &'static [Family],
    /// The range.
    pub span: &'static Span,
    /// The measured figure and the file it comes from.
    pub source: &'static str,
    /// Why the range is as wide as it is.
    pub widening: &'static str,
}

use Family::{
    LeoBursty as B, LeoLossy as L, LeoPhased as H, LeoSparse as P, LeoSpiky as S, Terrestrial as T,
};

const LEO: &[Family] = &[L, H, S, B, P];
const LEO_SLOTTED: &[Family] = &[L, H, S, B];
const GRID_FAMILIES: &[Family] = &[L, H, S];
const LOSSY_PHASED: &[Family] = &[L, H];
const LOSSY_PHASED_BURSTY: &[Family] = &[L, H, B];
const LOSSY_BURSTY: &[Family] = &[L, B];

// Handovers and the slot grid's phase.
const START_OFFSET: Span = Span::lin("~start_offset_s", 0.0, 59.0, 0);
const SWITCH_P: Span = Span::lin("handovers.probability", 0.45, 0.95, 2);
const SPARSE_SWITCH_P: Span = Span::lin("handovers.probability", 0.02, 0.25, 3);
const GRID_FIRST: Span = Span::lin("handovers.first_ms", 1_000.0, 15_000.0, 0);

// Forward capacity.
const LOSSY_CAP: Span = Span::log("forward.capacity.median_mbps", 3.84, 15.36, 2);
const LOSSY_CAP_SIGMA: Span = Span::lin("forward.capacity.sigma_log", 0.3, 1.0, 3);
const LOSSY_CAP_RHO: Span = Span::lin("forward.capacity.rho", 0.6, 0.95, 3);
const LOSSY_CAP_WITHIN: Span = Span::lin("forward.capacity.within_sigma_log", 0.1, 0.3, 3);
const SPIKY_CAP: Span = Span::log("forward.capacity.median_mbps", 3.0, 60.0, 2);
const SPIKY_CAP_SIGMA: Span = Span::lin("forward.capacity.sigma_log", 0.1, 0.7, 3);
const SPIKY_CAP_RHO: Span = Span::lin("forward.capacity.rho", 0.0, 0.9, 3);
const SPIKY_CAP_WITHIN: Span = Span::lin("forward.capacity.within_sigma_log", 0.03, 0.25, 3);
const BURSTY_CAP: Span = Span::log("forward.capacity.median_mbps", 2.0, 13.0, 2);
const BURSTY_CAP_SIGMA: Span = Span::lin("forward.capacity.sigma_log", 0.4, 1.0, 3);
const BURSTY_CAP_RHO: Span = Span::lin("forward.capacity.rho", 0.8, 0.97, 3);
const BURSTY_STALL_ENTER: Span = Span::log("forward.capacity.stall.enter_per_s", 0.002, 0.03, 4);
const BURSTY_STALL_MEAN: Span = Span::lin("forward.capacity.stall.mean_s", 1.0, 6.0, 2);
const BURSTY_STALL_MBPS: Span = Span::log("forward.capacity.stall.mbps", 0.05, 0.5, 3);
const SPARSE_CAP: Span = Span::log("forward.capacity.median_mbps", 2.0, 50.0, 2);
const SPARSE_CAP_SIGMA: Span = Span::lin("forward.capacity.sigma_log", 0.05, 0.6, 3);
const SPARSE_CAP_RHO: Span = Span::lin("forward.capacity.rho", 0.5, 0.95, 3);
const TERR_CAP: Span = Span::log("forward.capacity.median_mbps", 1.0, 60.0, 2);
const TERR_CAP_SIGMA: Span = Span::lin("forward.capacity.sigma_log", 0.05, 1.3, 3);
const TERR_CAP_RHO: Span = Span::lin("forward.capacity.rho", 0.5, 0.95, 3);
const TERR_STALL_ENTER: Span = Span::log("forward.capacity.stall.enter_per_s", 0.005, 0.08, 4);
const TERR_STALL_MEAN: Span = Span::lin("forward.capacity.stall.mean_s", 1.0, 4.0, 2);
const TERR_STALL_MBPS: Span = Span::log("forward.capacity.stall.mbps", 0.05, 0.3, 3);

// Reverse capacity.
const LEO_REV_CAP: Span = Span::log("reverse.capacity.median_mbps", 20.0, 100.0, 2);
const LEO_REV_CAP_SIGMA: Span = Span::lin("reverse.capacity.sigma_log", 0.1, 0.5, 3);
const TERR_REV_CAP: Span = Span::log("reverse.capacity.median_mbps", 2.0, 100.0, 2);
const TERR_REV_CAP_SIGMA: Span = Span::lin("reverse.capacity.sigma_log", 0.05, 1.3, 3);
const TERR_REV_CAP_RHO: Span = Span::lin("reverse.capacity.rho", 0.5, 0.95, 3);

// Slotted delay, forward.
const LOSSY_DELAY: Span = Span::log("forward.delay.median_ms", 20.0, 120.0, 1);
const SPIKY_DELAY: Span = Span::log("forward.delay.median_ms", 8.0, 80.0, 1);
const SPARSE_DELAY: Span = Span::log("forward.delay.median_ms", 20.0, 150.0, 1);
const PHASED_DELAY: Span = Span::log("forward.delay.median_ms", 22.0, 110.0, 1);
const DELAY_SIGMA: Span = Span::lin("forward.delay.sigma_log", 0.15, 0.5, 3);
const DELAY_RHO: Span = Span::lin("forward.delay.rho", 0.2, 0.6, 3);
const DELAY_JITTER: Span = Span::lin("forward.delay.jitter_ms", 1.0, 10.0, 2);
const LOSSY_SPIKE_MIN: Span = Span::lin("forward.delay.spike_min_ms", 20.0, 80.0, 1);
const LOSSY_SPIKE_SPAN: Span = Span::lin("~forward.delay.spike_span_ms", 20.0, 100.0, 1);
const LOSSY_SPIKE_MAX: Span = Span::derived("forward.delay.spike_max_ms", 40.0, 180.0, 1);
const LOSSY_SPIKE_MS: Span = Span::lin("forward.delay.spike_duration_ms", 60.0, 200.0, 0);
const SPIKY_SPIKE_MIN: Span = Span::lin("forward.delay.spike_min_ms", 15.0, 60.0, 1);
const SPIKY_SPIKE_SPAN: Span = Span::lin("~forward.delay.spike_span_ms", 10.0, 60.0, 1);
const SPIKY_SPIKE_MAX: Span = Span::derived("forward.delay.spike_max_ms", 25.0, 120.0, 1);
const SPIKY_SPIKE_MS: Span = Span::lin("forward.delay.spike_duration_ms", 30.0, 200.0, 0);
const SPARSE_SPIKE_MIN: Span = Span::lin("forward.delay.spike_min_ms", 0.0, 40.0, 1);
const SPARSE_SPIKE_SPAN: Span = Span::lin("~forward.delay.spike_span_ms", 0.0, 40.0, 1);
const SPARSE_SPIKE_MAX: Span = Span::derived("forward.delay.spike_max_ms", 0.0, 80.0, 1);
const SPARSE_SPIKE_MS: Span = Span::lin("forward.delay.spike_duration_ms", 0.0, 200.0, 0);

// Slotted delay, reverse.
const REV_DELAY_RATIO: Span = Span::lin("~reverse.delay.median_ratio", 0.8, 1.25, 3);
const REV_DELAY_SIGMA: Span = Span::lin("reverse.delay.sigma_log", 0.15, 0.5, 3);
const REV_DELAY_RHO: Span = Span::lin("reverse.delay.rho", 0.2, 0.6, 3);
const REV_DELAY_CORR: Span = Span::lin("reverse.delay.correlation", 0.5, 0.9, 3);
const REV_DELAY_JITTER: Span = Span::lin("reverse.delay.jitter_ms", 1.0, 10.0, 2);
const REV_SPIKE_MIN: Span = Span::lin("reverse.delay.spike_min_ms", 10.0, 40.0, 1);
const REV_SPIKE_SPAN: Span = Span::lin("~reverse.delay.spike_span_ms", 10.0, 40.0, 1);
const REV_SPIKE_MAX: Span = Span::derived("reverse.delay.spike_max_ms", 20.0, 80.0, 1);
const REV_SPIKE_MS: Span = Span::lin("reverse.delay.spike_duration_ms", 50.0, 150.0, 0);

// Constant delay (terrestrial).
const TERR_DELAY: Span = Span::log("forward.delay.ms", 8.0, 60.0, 1);
const TERR_JITTER: Span = Span::lin("forward.delay.jitter_ms", 0.5, 8.0, 2);
const TERR_JITTER_RHO: Span = Span::lin("forward.delay.jitter_rho", 0.8, 0.95, 3);

// Random loss.
const LOSSY_LOSS: Span = Span::lin("forward.loss.rate", 0.0, 0.015, 4);
const LEO_REV_LOSS: Span = Span::lin("reverse.loss.rate", 0.0, 0.01, 4);
const PHASED_LOSS: Span = Span::lin("forward.loss.rate", 0.0, 0.005, 5);
const SPIKY_LOSS: Span = Span::lin("forward.loss.rate", 0.0, 0.002, 5);
const SPIKY_REV_LOSS: Span = Span::lin("reverse.loss.rate", 0.0, 0.002, 5);
const SPARSE_LOSS: Span = Span::lin("forward.loss.rate", 0.0, 0.02, 4);
const SPARSE_REV_LOSS: Span = Span::lin("reverse.loss.rate", 0.0, 0.02, 4);
const TERR_LOSS: Span = Span::log("forward.loss.rate", 0.0005, 0.02, 5);

// Gilbert-Elliott loss.
const BURSTY_BAD_SHARE: Span = Span::log("~forward.loss.bad_share", 0.01, 0.10, 4);
const BURSTY_BAD_TO_GOOD: Span = Span::log("forward.loss.p_bad_to_good", 0.01, 0.1, 4);
const BURSTY_GOOD_TO_BAD: Span = Span::derived("forward.loss.p_good_to_bad", 0.000_1, 0.011_2, 7);
const BURSTY_LOSS_BAD: Span = Span::lin("forward.loss.loss_bad", 0.1, 0.5, 3);
const BURSTY_LOSS_GOOD: Span = Span::lin("forward.loss.loss_good", 0.0, 0.025, 4);
const TERR_BAD_SHARE: Span = Span::log("~forward.loss.bad_share", 0.005, 0.05, 4);
const TERR_BAD_TO_GOOD: Span = Span::log("forward.loss.p_bad_to_good", 0.005, 0.05, 4);
const TERR_GOOD_TO_BAD: Span = Span::derived("forward.loss.p_good_to_bad", 0.000_025, 0.002_64, 7);
const TERR_LOSS_BAD: Span = Span::lin("forward.loss.loss_bad", 0.2, 0.6, 3);
const TERR_LOSS_GOOD: Span = Span::lin("forward.loss.loss_good", 0.0, 0.002, 5);

// Boundary loss profiles.
const ROW0: Span = Span::lin("forward.handover.boundary_loss_profile[0]", 0.05, 0.70, 4);
const ROW1_RATIO: Span = Span::lin("~forward.handover.row1_ratio", 0.1, 0.6, 3);
const ROW1: Span = Span::derived("forward.handover.boundary_loss_profile[1]", 0.005, 0.42, 5);
const ROW2_RATIO: Span = Span::lin("~forward.handover.row2_ratio", 0.05, 0.4, 3);
const ROW2: Span = Span::derived(
    "forward.handover.boundary_loss_profile[2]",
    0.000_25,
    0.168,
    5,
);
const ROW3_RATIO: Span = Span::lin("~forward.handover.row3_ratio", 0.2, 0.8, 3);
const ROW3: Span = Span::derived(
    "forward.handover.boundary_loss_profile[3]",
    0.000_05,
    0.134_4,
    5,
);
const REV_ROW0: Span = Span::lin("reverse.handover.boundary_loss_profile[0]", 0.0, 0.06, 4);
const REV_ROW1_RATIO: Span = Span::lin("~reverse.handover.row1_ratio", 0.2, 1.0, 3);
const REV_ROW1: Span = Span::derived("reverse.handover.boundary_loss_profile[1]", 0.0, 0.06, 5);

// The lossy phase of a slot (phased): where it starts and how long it lasts after each
// boundary, s, and its loss. Start and length together end by 14.5 s (`PHASE_END_ROWS`).
const PHASE_START: Span = Span::lin("~phase_start_s", 1.0, 12.0, 1);
const PHASE_LENGTH: Span = Span::lin("~phase_length_s", 0.5, 2.5, 1);
const PHASE_LOSS: Span = Span::log("~phase_loss", 0.02, 0.15, 4);

// Handover outage (sparse).
const SPARSE_OUTAGE: Span = Span::lin("forward.handover.outage_ms", 0.0, 2_500.0, 0);
// Delivery gap at each handover (spiky): the link serves nothing and holds what arrives.
const SPIKY_GAP: Span = Span::lin("forward.handover.outage_ms", 30.0, 180.0, 0);

// Buffers.
const LEO_BUFFER: Span = Span::log("forward.buffer_ms", 100.0, 500.0, 0);
const TERR_BUFFER: Span = Span::log("forward.buffer_ms", 50.0, 500.0, 0);

/// The range table: every span every family draws, with its provenance. The test
/// `every_parameter_stays_in_its_documented_range` holds the draws to it, and
/// `the_docs_carry_the_range_table` holds `docs/path-family.md` and this module's docs to it.
pub const RANGES: &[RangeRow] = &[
    RangeRow {
        families: LEO,
        span: &START_OFFSET,
        source: "slot boundaries at seconds 12/27/42/57 of each UTC minute (reference C1; lagos.csv virtual seconds 12/27/42/57)",
        widening: "`start` at second 0-59 of a minute: the boundaries fall at any phase of the decision interval, where every shipped file starts on the minute",
    },
    RangeRow {
        families: LEO_SLOTTED,
        span: &SWITCH_P,
        source: "share of slot boundaries that change satellite: Brisbane 0.845, Kanazawa 0.576, Louvain 0.769, pooled 0.74 (SatInView logs, docs/architecture.md \"The calibrated predictor\")",
        widening: "about 0.13 past the lowest and the highest site: sites unlike the three logged",
    },
    RangeRow {
        families: GRID_FAMILIES,
        span: &GRID_FIRST,
        source: "LeoCC's spikes every 15 s from 8 750 ms (starlink/leocc/delay_example_10ms.txt, leocc-trace header)",
        widening: "grid variant only: any phase within one 15-s slot",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_SWITCH_P,
        source: "sparse-leo: 0.15-0.16 handovers per minute per terminal (sparse-leo header); the paper's \"approximately 0-1 per minute\"",
        widening: "0.02-0.25 of 4 boundaries a minute is 0.08-1.0 handovers a minute: from half the measured rate to the paper's upper figure",
    },
    RangeRow {
        families: LOSSY_PHASED,
        span: &LOSSY_CAP,
        source: "uplink slot means' geometric mean 7.68 Mbit/s (lagos.csv, starlink header)",
        widening: "x0.5 to x2: uplinks slower and faster than the one trace",
    },
    RangeRow {
        families: LOSSY_PHASED,
        span: &LOSSY_CAP_SIGMA,
        source: "log sd of the uplink slot means 0.65 (lagos.csv, starlink header)",
        widening: "x0.46 to x1.5: steadier and rougher slot-to-slot reallocation",
    },
    RangeRow {
        families: LOSSY_PHASED,
        span: &LOSSY_CAP_RHO,
        source: "slot lag-1 autocorrelation 0.855 (lagos.csv, starlink header)",
        widening: "0.25 below to 0.1 above: slot levels that forget faster",
    },
    RangeRow {
        families: LOSSY_PHASED,
        span: &LOSSY_CAP_WITHIN,
        source: "per-second log sd inside a slot 0.18-0.22 (lagos.csv, starlink header)",
        widening: "x0.5 to x1.4",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_CAP,
        source: "7.68 Mbit/s (lagos.csv uplink) and 46.3 (starlink/leocc/bw_example.mahimahi whole-slot geometric mean), starlink header",
        widening: "x0.4 of the lower to x1.3 of the higher: from a bottleneck below the video's 2.5 Mbit/s cap to none",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_CAP_SIGMA,
        source: "slot log sd 0.18 (bw_example.mahimahi) and 0.65 (lagos.csv), starlink header",
        widening: "x0.55 of the lower to x1.1 of the higher",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_CAP_RHO,
        source: "slot autocorrelation 0 (bw_example.mahimahi, too few slots to fit) and 0.855 (lagos.csv), starlink header",
        widening: "covers both",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_CAP_WITHIN,
        source: "within-slot per-second spread 0.058 (bw_example.mahimahi CV) and 0.18-0.22 (lagos.csv), starlink header",
        widening: "x0.5 of the lower to x1.1 of the higher",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_CAP,
        source: "measured: uplink per-second median 6.45 Mbit/s (lagos.csv)",
        widening: "x0.3 to x2: down to uplinks near the video's own rate",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_CAP_SIGMA,
        source: "measured: log sd of the uplink per second 0.70 (lagos.csv)",
        widening: "x0.57 to x1.4",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_CAP_RHO,
        source: "measured: lag-1 autocorrelation of the uplink per second 0.93 (lagos.csv)",
        widening: "0.13 below to 0.04 above (the process needs < 1)",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_STALL_ENTER,
        source: "measured: 0.5 % of uplink seconds under a quarter of the median, in runs of 3.9 s: 0.0013 entries per second (lagos.csv)",
        widening: "x1.5 to x23: this family is the heavy end, dips several times a minute at most",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_STALL_MEAN,
        source: "measured: the dips last 3.9 s on average (lagos.csv)",
        widening: "x0.26 to x1.5",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_STALL_MBPS,
        source: "measured: slowest uplink second 0.11 Mbit/s (lagos.csv)",
        widening: "x0.45 to x4.5: from a near outage to a dip the 50-kbit/s minimum video still fits",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_CAP,
        source: "LEO access rates 7.68 (lagos.csv uplink) and 46.3 Mbit/s (bw_example.mahimahi), starlink header; sparse-leo's 1 Gbit/s is StarryNet's link rate, never a bottleneck",
        widening: "x0.26 of the lower to x1.1 of the higher: the bottleneck is the access link, as on a real sparse constellation",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_CAP_SIGMA,
        source: "not fitted (no sparse-LEO capacity trace in ../shared/data); 0.05 (broadband) to 0.65 (lagos.csv slots) bracket it",
        widening: "the bracket",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_CAP_RHO,
        source: "per-second autocorrelation 0.52-0.93 (Mahimahi LTE, lagos.csv measured)",
        widening: "the bracket",
    },
    RangeRow {
        families: &[T],
        span: &TERR_CAP,
        source: "LTE uplink per-trace means 1.9-13.3 Mbit/s, pooled median 4.01 (terrestrial/mahimahi/*.up), 5G 26.7 (terrestrial/5g-ucc), broadband 20 (not fitted); terrestrial-* headers",
        widening: "x0.5 of the slowest LTE trace to x2.2 of 5G",
    },
    RangeRow {
        families: &[T],
        span: &TERR_CAP_SIGMA,
        source: "per-second log sd 0.05 (broadband, not fitted), 0.90 (LTE up), 1.19 (5G; 1.13-1.43 per drive); terrestrial-* headers",
        widening: "from broadband to x1.1 of 5G",
    },
    RangeRow {
        families: &[T],
        span: &TERR_CAP_RHO,
        source: "lag-1 autocorrelation 0.518-0.889 (LTE up), 0.76 (5G), 0.9 (broadband); terrestrial-* headers",
        widening: "0.02 below the lowest to 0.06 above the highest",
    },
    RangeRow {
        families: &[T],
        span: &TERR_STALL_ENTER,
        source: "5G 0.077 per second (5g-ucc, terrestrial-5g header); measured: LTE uplink seconds under a tenth of the median 1.4-9.1 % in runs of 1.0-1.8 s, 0.014-0.056 per second (terrestrial/mahimahi/*.up)",
        widening: "x0.36 of the lowest LTE to 1.04 x 5G",
    },
    RangeRow {
        families: &[T],
        span: &TERR_STALL_MEAN,
        source: "5G stalls 2.5 s (2.1-3.5 per drive), 5g-ucc; measured: LTE 1.0-1.8 s (mahimahi)",
        widening: "x1 of the shortest to x1.15 of the longest",
    },
    RangeRow {
        families: &[T],
        span: &TERR_STALL_MBPS,
        source: "5G stall rate 0.1 Mbit/s (most stalled seconds carry less), terrestrial-5g header",
        widening: "x0.5 to x3",
    },
    RangeRow {
        families: LEO,
        span: &LEO_REV_CAP,
        source: "downlink 46.3 Mbit/s (bw_example.mahimahi) and row median 91.5 (lagos.csv), starlink header and ../shared/data/README.md",
        widening: "x0.43 of the lower to x1.1 of the higher; feedback never fills it",
    },
    RangeRow {
        families: LEO,
        span: &LEO_REV_CAP_SIGMA,
        source: "downlink slot log sd 0.18 (bw_example.mahimahi), starlink header",
        widening: "x0.55 to x2.8",
    },
    RangeRow {
        families: &[T],
        span: &TERR_REV_CAP,
        source: "LTE downlink pooled median 5.62 Mbit/s (mahimahi *.down), 5G 26.7, broadband 100 (not fitted); terrestrial-* headers",
        widening: "x0.36 of LTE to x1 of broadband",
    },
    RangeRow {
        families: &[T],
        span: &TERR_REV_CAP_SIGMA,
        source: "as the forward direction (LTE down 0.776)",
        widening: "as the forward direction",
    },
    RangeRow {
        families: &[T],
        span: &TERR_REV_CAP_RHO,
        source: "LTE downlink 0.558-0.760, 5G 0.76, broadband 0.9; terrestrial-* headers",
        widening: "as the forward direction",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &LOSSY_DELAY,
        source: "uplink slot median one-way delay 80.0 ms (lagos.csv, starlink header); measured: ping RTT p50 43 ms bent-pipe (mmsys24 Seattle), 109 ms via ISLs (mmsys24 Lagos)",
        widening: "from the bent pipe's 21 ms one-way to x1.5 of lagos.csv",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_DELAY,
        source: "measured: one-way delay median 11 ms (starlink/leocc/delay_example_10ms.txt); 80.0 ms (lagos.csv)",
        widening: "x0.7 of LeoCC to x1 of lagos.csv",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_DELAY,
        source: "one-way delay of an ISL path over thousands of km, 20-150 ms (sparse-leo header, SGP4 geometry)",
        widening: "the figure's range",
    },
    RangeRow {
        families: &[H],
        span: &PHASED_DELAY,
        source: "measured: ping RTT p50 109 ms via ISLs (starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt) and 43 ms bent-pipe (starlink/mmsys24/no-isl-ping-gw-seattle-230911-170535-0.1s-60min.txt): 54.5 and 21.5 ms one-way",
        widening: "from the bent pipe's one-way (a path over ISLs is no shorter) to x2 of the Lagos ISL path's (its RTT p95 208 ms: longer ISL routes)",
    },
    RangeRow {
        families: LEO,
        span: &DELAY_SIGMA,
        source: "log sd of the slot median delay 0.339 uplink, 0.412 downlink (lagos.csv, starlink header)",
        widening: "x0.44 to x1.2",
    },
    RangeRow {
        families: LEO,
        span: &DELAY_RHO,
        source: "per-handover autocorrelation 0.39 uplink, 0.31 downlink (lagos.csv, starlink header)",
        widening: "0.11-0.19 beyond the two",
    },
    RangeRow {
        families: LEO,
        span: &DELAY_JITTER,
        source: "within-slot delay sd 6.8 ms per 100-ms row (lagos.csv); ping RTT changes 6.5 ms (Lagos) and 11.5 ms (Seattle) away from boundaries (mmsys24); fitted 5 ms; starlink header",
        widening: "x0.2 to x2 of the fit",
    },
    RangeRow {
        families: LOSSY_PHASED_BURSTY,
        span: &LOSSY_SPIKE_MIN,
        source: "measured: uplink delay of a boundary's first row over the slot median, per boundary p25 46, p50 75, p90 122 ms (lagos.csv); fitted 50-150 ms (starlink header)",
        widening: "x0.43 of p25 to x1.1 of p50 for the smallest spike",
    },
    RangeRow {
        families: LOSSY_PHASED_BURSTY,
        span: &LOSSY_SPIKE_SPAN,
        source: "the p25-p90 spread of the same figure, 76 ms (lagos.csv, measured)",
        widening: "x0.26 to x1.3",
    },
    RangeRow {
        families: LOSSY_PHASED_BURSTY,
        span: &LOSSY_SPIKE_MAX,
        source: "spike_min + span",
        widening: "derived",
    },
    RangeRow {
        families: LOSSY_PHASED_BURSTY,
        span: &LOSSY_SPIKE_MS,
        source: "fitted 120 ms (lagos.csv rows 0-1 after a boundary: +75 and +16 ms, starlink header); reference C2: about 140 ms",
        widening: "x0.5 to x1.4 of the longer",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_SPIKE_MIN,
        source: "measured: LeoCC spikes 21-58 ms over the slot median (delay_example_10ms.txt); reference C2 +30-50 ms",
        widening: "x0.7 of the smallest to the largest",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_SPIKE_SPAN,
        source: "the spread of the LeoCC spikes, 37 ms (measured)",
        widening: "x0.27 to x1.6",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_SPIKE_MAX,
        source: "spike_min + span",
        widening: "derived",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_SPIKE_MS,
        source: "measured: LeoCC spikes last 20-110 ms above base + 10 ms (delay_example_10ms.txt); reference C2 about 140 ms",
        widening: "x1.5 of the shortest to x1.4 of C2",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_SPIKE_MIN,
        source: "StarryNet emulates propagation only (no spike, sparse-leo header); LeoCC spikes 21-58 ms (measured)",
        widening: "from none to LeoCC's",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_SPIKE_SPAN,
        source: "as spike_min",
        widening: "as spike_min",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_SPIKE_MAX,
        source: "spike_min + span",
        widening: "derived",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_SPIKE_MS,
        source: "none (StarryNet) to about 140 ms (reference C2)",
        widening: "x1.4 of C2",
    },
    RangeRow {
        families: LEO,
        span: &REV_DELAY_RATIO,
        source: "downlink over uplink slot median delay 80.3 / 80.0 ms (lagos.csv, starlink header)",
        widening: "either direction up to a quarter longer",
    },
    RangeRow {
        families: LEO,
        span: &REV_DELAY_SIGMA,
        source: "as forward.delay.sigma_log",
        widening: "as forward.delay.sigma_log",
    },
    RangeRow {
        families: LEO,
        span: &REV_DELAY_RHO,
        source: "as forward.delay.rho",
        widening: "as forward.delay.rho",
    },
    RangeRow {
        families: LEO,
        span: &REV_DELAY_CORR,
        source: "correlation of the two directions' slot medians 0.74 (lagos.csv, starlink header)",
        widening: "0.24 below to 0.16 above",
    },
    RangeRow {
        families: LEO,
        span: &REV_DELAY_JITTER,
        source: "as forward.delay.jitter_ms",
        widening: "as forward.delay.jitter_ms",
    },
    RangeRow {
        families: LEO,
        span: &REV_SPIKE_MIN,
        source: "downlink spikes 20-45 ms for 100 ms (bw_example/delay_example, starlink header); measured: lagos.csv downlink first-row rise p75 11, p90 54 ms",
        widening: "x0.5 of the smallest to x0.9 of the largest",
    },
    RangeRow {
        families: LEO,
        span: &REV_SPIKE_SPAN,
        source: "the 25-ms spread of the fit",
        widening: "x0.4 to x1.6",
    },
    RangeRow {
        families: LEO,
        span: &REV_SPIKE_MAX,
        source: "spike_min + span",
        widening: "derived",
    },
    RangeRow {
        families: LEO,
        span: &REV_SPIKE_MS,
        source: "fitted 100 ms (starlink header)",
        widening: "x0.5 to x1.5",
    },
    RangeRow {
        families: &[T],
        span: &TERR_DELAY,
        source: "one-way 12 ms (broadband, not fitted), 37 ms (5G ping RTT median 74), 44.5 ms (LTE, RTT 89); 5g-ucc, terrestrial-* headers",
        widening: "x0.67 of broadband to x1.35 of LTE",
    },
    RangeRow {
        families: &[T],
        span: &TERR_JITTER,
        source: "1.0, 1.4, 3.5 ms fitted; measured: ping RTT sd p90 5.0 ms (5G), 12.0 ms (LTE), 5g-ucc",
        widening: "x0.5 of the smallest fit to x0.94 of LTE's p90 per direction (12 / sqrt 2)",
    },
    RangeRow {
        families: &[T],
        span: &TERR_JITTER_RHO,
        source: "0.9, not fitted (the datasets sample once per second); terrestrial-* headers",
        widening: "+-0.1 around it, capped at 0.95",
    },
    RangeRow {
        families: &[L],
        span: &LOSSY_LOSS,
        source: "uplink loss inside slots 0.50 % (lagos.csv rows 10-139, starlink header); reference C2 1-2 % non-congestive",
        widening: "x0 to x3: from none to the top of C2",
    },
    RangeRow {
        families: &[H],
        span: &PHASED_LOSS,
        source: "measured: 0.15 % of the echoes outside the lossy phase (0.0-0.3 % per half second of the slot, 0.6-0.7 % in the second after the phase), 0.47 % overall with it (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt; docs/experiments/mmsys24-2026-12-06.md)",
        widening: "x0 to x3.3: from none to about the trace's overall rate, so that the phase still loses at least 4 times the rest of the slot",
    },
    RangeRow {
        families: LOSSY_PHASED_BURSTY,
        span: &LEO_REV_LOSS,
        source: "downlink loss inside slots 0.49 % (lagos.csv, starlink header)",
        widening: "x0 to x2",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_LOSS,
        source: "no loss in the LeoCC traces (leocc-trace)",
        widening: "up to x0.4 of lagos.csv's 0.50 %: never more than a trace of random loss",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_REV_LOSS,
        source: "as forward.loss.rate",
        widening: "as forward.loss.rate",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_LOSS,
        source: "1 % per link, as StarryNet and the paper configure (sparse-leo header)",
        widening: "x0 to x2",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_REV_LOSS,
        source: "as forward.loss.rate",
        widening: "as forward.loss.rate",
    },
    RangeRow {
        families: &[T],
        span: &TERR_LOSS,
        source: "measured: 2.5 % of 5G and 4.9 % of LTE ping batches lost anything (5g-ucc); Mahimahi traces carry no random loss",
        widening: "from a trace of loss to reference C2's 2 %: lossy terrestrial paths the data barely shows",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_BAD_SHARE,
        source: "measured: 3.8 % of uplink and 2.0 % of downlink rows inside slots lose packets (lagos.csv)",
        widening: "x0.26 to x2.6 of the uplink: up to one packet in ten sent in a burst",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_BAD_TO_GOOD,
        source: "measured: lossy runs last 1.19 rows (uplink) and 2.38 rows (downlink) of 100 ms (lagos.csv), 30-60 packets at 2.5 Mbit/s in 1 200-byte packets",
        widening: "mean bursts of 10-100 packets",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_GOOD_TO_BAD,
        source: "bad share x p_bad_to_good / (1 - bad share)",
        widening: "derived",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_LOSS_BAD,
        source: "measured: mean loss of a lossy row 13.3 % uplink, 24.4 % downlink, p90 44 % (lagos.csv)",
        widening: "x0.75 of the uplink to x1.1 of the downlink p90",
    },
    RangeRow {
        families: &[B],
        span: &BURSTY_LOSS_GOOD,
        source: "measured: ping loss 0.47 % via ISLs (mmsys24 Lagos), 2.54 % bent-pipe (mmsys24 Seattle), 94-97 % of it single pings",
        widening: "x0 to x1 of Seattle: independent loss on top of the bursts",
    },
    RangeRow {
        families: &[T],
        span: &TERR_BAD_SHARE,
        source: "measured: 2.5 % (5G) and 4.9 % (LTE) of ping batches lost anything (5g-ucc)",
        widening: "x0.2 of 5G to x1 of LTE",
    },
    RangeRow {
        families: &[T],
        span: &TERR_BAD_TO_GOOD,
        source: "the lossy batches are outages of about a second (5g-ucc, terrestrial-lte header): 20-200 packets",
        widening: "mean bursts of 20-200 packets",
    },
    RangeRow {
        families: &[T],
        span: &TERR_GOOD_TO_BAD,
        source: "bad share x p_bad_to_good / (1 - bad share)",
        widening: "derived",
    },
    RangeRow {
        families: &[T],
        span: &TERR_LOSS_BAD,
        source: "measured: a lossy ping batch loses 30 % at the median (5g-ucc, 5G and LTE)",
        widening: "x0.67 to x2",
    },
    RangeRow {
        families: &[T],
        span: &TERR_LOSS_GOOD,
        source: "none in 97-98 % of ping batches (5g-ucc)",
        widening: "a trace of independent loss",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW0,
        source: "measured: uplink loss in the first 100-ms row after a boundary, mean 47.5 %, per boundary p25 30, p50 50, p90 70 % (lagos.csv); starlink header 47.48 %",
        widening: "from weak boundaries (x0.1 of the mean) to the p90",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW1_RATIO,
        source: "row 1 over row 0: 20.34 / 47.48 = 0.43 (lagos.csv uplink, starlink header)",
        widening: "x0.23 to x1.4",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW1,
        source: "row 0 x row1_ratio",
        widening: "derived",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW2_RATIO,
        source: "row 2 over row 1: 3.75 / 20.34 = 0.18 (lagos.csv uplink)",
        widening: "x0.27 to x2.2",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW2,
        source: "row 1 x row2_ratio",
        widening: "derived",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW3_RATIO,
        source: "row 3 over row 2: 1.92 / 3.75 = 0.51 (lagos.csv uplink)",
        widening: "x0.4 to x1.6",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &ROW3,
        source: "row 2 x row3_ratio",
        widening: "derived",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &REV_ROW0,
        source: "downlink loss in the first row after a boundary 2.64 % (lagos.csv, starlink header); measured: 94 % of boundaries lose nothing there",
        widening: "x0 to x2.3",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &REV_ROW1_RATIO,
        source: "row 1 over row 0: 1.93 / 2.64 = 0.73 (lagos.csv downlink)",
        widening: "x0.27 to x1.4",
    },
    RangeRow {
        families: LOSSY_BURSTY,
        span: &REV_ROW1,
        source: "row 0 x row1_ratio",
        widening: "derived",
    },
    RangeRow {
        families: &[H],
        span: &PHASE_START,
        source: "measured: the echoes sent 4.0-5.0 s after each reconfiguration (seconds 16-17, 31-32, 46-47, 1-2 of the UTC minute) lose 5.5 and 4.9 %, every other half second 0.0-0.7 % (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt; docs/experiments/mmsys24-2026-12-06.md); one decimal, the 100-ms row",
        widening: "any phase from the first second on (clear of the boundary itself) whose longest phase still ends by 14.5 s, the end of the last half-second bin the sender's phase detector tests",
    },
    RangeRow {
        families: &[H],
        span: &PHASE_LENGTH,
        source: "measured: 1.0 s, the two lossy half seconds 4.0-5.0 s after each reconfiguration (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt)",
        widening: "x0.5 to x2.5: from one half-second bin of the phase detector to five",
    },
    RangeRow {
        families: &[H],
        span: &PHASE_LOSS,
        source: "measured: 4.9-5.5 % of the echoes sent in the phase lost (../shared/data/starlink/mmsys24/isl-ping-gw-lagos-230911-172603-0.1s-60min.txt; docs/experiments/mmsys24-2026-12-06.md); the same rows at every slot boundary, handover or not, as the trace's phase follows every reconfiguration",
        widening: "x0.4 to x2.7: from 4 times the highest random loss to about a packet in seven",
    },
    RangeRow {
        families: &[S],
        span: &SPIKY_GAP,
        source: "measured: the capacity trace delivers nothing for 59-135 ms (mean 82) at each of its 8 slot boundaries, with the delay spike (starlink/leocc/bw_example.mahimahi); the same value both directions, as leocc-trace replays one file both ways",
        widening: "x0.5 of the shortest to x1.33 of the longest",
    },
    RangeRow {
        families: &[P],
        span: &SPARSE_OUTAGE,
        source: "2-s routing outage after a change of serving satellite (1-3 s with bird's 1-s hello and SPF tick), starrynet-sparse header; the same value both directions",
        widening: "from an instant handover to x1.25",
    },
    RangeRow {
        families: LEO,
        span: &LEO_BUFFER,
        source: "250 ms at the median rate, not fitted (starlink header: lagos.csv one-way delay reaches 486 ms uplink)",
        widening: "x0.4 to x2: shallow and deep queues",
    },
    RangeRow {
        families: &[T],
        span: &TERR_BUFFER,
        source: "100 ms (broadband), 250 ms (LTE, 5G; Mahimahi's drop-tail queues of a few hundred ms); not fitted",
        widening: "x0.5 of broadband to x2 of LTE",
    },
];

/// The range table as markdown: what docs/path-family.md and these docs show.
pub fn range_table() -> String {
    let mut out = String::from(
        "| family | parameter | range | draw | measured figure (file) | widening |\n\
         |---|---|---|---|---|---|\n",
    );
    for row in RANGES {
        let families: Vec<&str> = row.families.iter().map(|f| f.name()).collect();
        let scale = match row.span.scale {
            Scale::Linear => "uniform",
            Scale::Log => "log-uniform",
            Scale::Derived => "derived",
        };
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "| {} | `{}` | {} - {} | {} | {} | {} |",
            families.join(", "),
            row.span.name,
            fmt_num(row.span.lo),
            fmt_num(row.span.hi),
            scale,
            row.source,
            row.widening,
        );
    }
    out
}

/// A number as the table shows it: the shortest decimal that reads back as the same `f64`.
fn fmt_num(x: f64) -> String {
    format!("{x}")
}

/// The range of `name` in `family`, if the table has one.
pub fn range_of(family: Family, name: &str) -> Option<&'static Span> {
    RANGES
        .iter()
        .find(|row| row.families.contains(&family) && row.span.name == name)
        .map(|row| row.span)
}

/// One drawn path.
#[derive(Debug, Clone)]
pub struct DrawnPath {
    /// Its index in the draw (`path-0007` is 7).
    pub index: usize,
    /// The family it was drawn from.
    pub family: Family,
    /// Every drawn number by its span's name ([`RANGES`]).
    pub params: BTreeMap<String, f64>,
    /// Every choice made inside the family (`handovers.source = "grid"`, ...).
    pub choices: BTreeMap<String, String>,
    /// The scenario, validated.
    pub file: ScenarioFile,
    /// The file's text: a comment header, then the TOML.
    pub toml: String,
}

impl DrawnPath {
    /// The scenario's name, `path-0007`.
    pub fn name(&self) -> String {
        path_name(self.index)
    }

    /// The file name, `path-0007.toml`.
    pub fn file_name(&self) -> String {
        format!("{}.toml", self.name())
    }
}

/// The name of path `index`: `path-0007`.
pub fn path_name(index: usize) -> String {
    format!("path-{index:04}")
}

/// Why a draw failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FamilyError {
    /// A count of zero or above [`MAX_PATHS`].
    #[error("the path count must be 1 to {MAX_PATHS}, got {0}")]
    Count(usize),
    /// A call length the scenario format refuses.
    #[error("the call must last 1 to {max} s, got {got} s", max = super::schema::MAX_CALL_S)]
    Duration {
        /// The length asked for, s.
        got: u64,
    },
    /// A drawn file that does not validate: a defect of the generator, never of the input.
    #[error("path {name} drew an invalid scenario: {field}: {message}")]
    Invalid {
        /// The path's name.
        name: String,
        /// Dotted field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A drawn file that does not serialise.
    #[error("path {name} does not serialise to TOML: {message}")]
    Serialize {
        /// The path's name.
        name: String,
        /// The serialiser's message.
        message: String,
    },
}

/// Draws paths `0 .. count` for `seed`, each a call of `duration_s` seconds.
///
/// # Errors
///
/// [`FamilyError::Count`] or [`FamilyError::Duration`] for arguments out of range; the others
/// only for a defect of the generator (each drawn file is validated as the loader would).
pub fn draw_paths(count: usize, seed: u64, duration_s: u64) -> Result<Vec<DrawnPath>, FamilyError> {
    if count == 0 || count > MAX_PATHS {
        return Err(FamilyError::Count(count));
    }
    if duration_s == 0 || duration_s > super::schema::MAX_CALL_S {
        return Err(FamilyError::Duration { got: duration_s });
    }
    (0..count)
        .map(|index| draw_path(index, seed, duration_s))
        .collect()
}

/// Draws path `index` for `seed` (what [`draw_paths`] does for each index).
///
/// # Errors
///
/// As [`draw_paths`].
pub fn draw_path(index: usize, seed: u64, duration_s: u64) -> Result<DrawnPath, FamilyError> {
    let name = path_name(index);
    let mut d = Draw {
        rng: rng::stream(seed, &format!("path-family/{index}")),
        params: BTreeMap::new(),
        choices: BTreeMap::new(),
    };
    let family = d.family();
    let call = CallSpec {
        duration_s,
        fps: FPS,
        min_bitrate_kbps: MIN_KBPS,
        start_bitrate_kbps: START_KBPS,
        max_bitrate_kbps: MAX_KBPS,
    };
    let body = match family {
        Family::LeoLossy => leo_lossy(&mut d),
        Family::LeoPhased => leo_phased(&mut d),
        Family::LeoSpiky => leo_spiky(&mut d),
        Family::LeoBursty => leo_bursty(&mut d),
        Family::LeoSparse => leo_sparse(&mut d),
        Family::Terrestrial => terrestrial(&mut d),
    };
    let file = ScenarioFile {
        name: name.clone(),
        description: format!("{}: {}", family.name(), body.description),
        kind: ScenarioKind::Generated,
        start: body.start,
        call,
        handovers: body.handovers,
        forward: body.forward,
        reverse: body.reverse,
        sender: None,
        replay: None,
    };
    file.validate().map_err(|e| FamilyError::Invalid {
        name: name.clone(),
        field: e.field,
        message: e.message,
    })?;
    let text = toml::to_string(&file).map_err(|e| FamilyError::Serialize {
        name: name.clone(),
        message: e.to_string(),
    })?;
    let toml = format!(
        "# {name}: a training path of the {family} family, drawn by `rtc-client paths --seed {seed}`\n\
         # (path family generator {GENERATOR_VERSION}). Not a calibrated scenario: each number is drawn from\n\
         # a range of docs/path-family.md, built around a figure measured on ../shared/data and\n\
         # widened so that a policy meets paths unlike any one trace.\n{}",
        without_default_handover(&text),
        family = family.name(),
    );
    Ok(DrawnPath {
        index,
        family,
        params: d.params,
        choices: d.choices,
        file,
        toml,
    })
}

/// What `family.json` holds: the generator, the seed, and every path's draws.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// `rtc-client paths`.
    pub generator: &'static str,
    /// [`GENERATOR_VERSION`].
    pub generator_version: u32,
    /// The seed.
    pub seed: u64,
    /// How many paths.
    pub count: usize,
    /// Every path's call length, s.
    pub duration_s: u64,
    /// The mixture weights by family name.
    pub weights: BTreeMap<&'static str, f64>,
    /// How many paths each family got.
    pub drawn: BTreeMap<&'static str, usize>,
    /// The paths in index order.
    pub paths: Vec<ManifestPath>,
}

/// One path in `family.json`.
#[derive(Debug, Clone, Serialize)]
pub struct ManifestPath {
    /// `path-0007.toml`.
    pub file: String,
    /// `path-0007`.
    pub name: String,
    /// The family.
    pub family: Family,
    /// The file's description.
    pub description: String,
    /// The choices made inside the family.
    pub choices: BTreeMap<String, String>,
    /// Every drawn number by its span's name.
    pub params: BTreeMap<String, f64>,
}

/// The manifest of `paths`, drawn for `seed` with calls of `duration_s`.
pub fn manifest(paths: &[DrawnPath], seed: u64, duration_s: u64) -> Manifest {
    let mut drawn: BTreeMap<&'static str, usize> =
        Family::ALL.iter().map(|f| (f.name(), 0)).collect();
    for p in paths {
        *drawn.entry(p.family.name()).or_default() += 1;
    }
    Manifest {
        generator: "rtc-client paths",
        generator_version: GENERATOR_VERSION,
        seed,
        count: paths.len(),
        duration_s,
        weights: Family::ALL.iter().map(|f| (f.name(), f.weight())).collect(),
        drawn,
        paths: paths
            .iter()
            .map(|p| ManifestPath {
                file: p.file_name(),
                name: p.name(),
                family: p.family,
                description: p.file.description.clone(),
                choices: p.choices.clone(),
                params: p.params.clone(),
            })
            .collect(),
    }
}

/// The draws of one path: its stream and what it has drawn so far.
struct Draw {
    rng: ChaCha8Rng,
    params: BTreeMap<String, f64>,
    choices: BTreeMap<String, String>,
}

impl Draw {
    /// The family, by the cumulative weights.
    fn family(&mut self) -> Family {
        let u = rng::open01(&mut self.rng);
        let mut acc = 0.0;
        for f in Family::ALL {
            acc += f.weight();
            if u < acc {
                return f;
            }
        }
        Family::Terrestrial
    }

    /// A draw from `span`, rounded and recorded.
    fn get(&mut self, span: &Span) -> f64 {
        let u = rng::open01(&mut self.rng);
        let raw = match span.scale {
            Scale::Log if span.lo > 0.0 => (span.lo.ln() + u * (span.hi / span.lo).ln()).exp(),
            _ => span.lo + u * (span.hi - span.lo),
        };
        self.set(span, raw)
    }

    /// A value computed from other draws, rounded, kept in `span` and recorded.
    fn set(&mut self, span: &Span, value: f64) -> f64 {
        let v = span.settle(value);
        self.params.insert(span.name.to_owned(), v);
        v
    }

    /// A choice with probability `p`, recorded under `key` as `yes` / `no`.
    fn chance(&mut self, key: &str, p: f64) -> bool {
        let yes = rng::chance(&mut self.rng, p);
        self.choices
            .insert(key.to_owned(), if yes { "yes" } else { "no" }.to_owned());
        yes
    }

    /// One of `options` by their weights (summing to 1), recorded under `key`.
    fn pick(&mut self, key: &str, options: &[(&'static str, f64)]) -> &'static str {
        let u = rng::open01(&mut self.rng);
        let mut acc = 0.0;
        let mut chosen = options.last().map_or("", |o| o.0);
        for &(name, w) in options {
            acc += w;
            if u < acc {
                chosen = name;
                break;
            }
        }
        self.choices.insert(key.to_owned(), chosen.to_owned());
        chosen
    }

    /// `start`: the minute of the shipped catalogues' epoch day at a drawn second, which moves
    /// the slot grid's phase.
    fn start(&mut self) -> String {
        let s = self.get(&START_OFFSET) as u32;
        format!("2025-05-12T12:00:{s:02}Z")
    }
}

/// What a family's draw gives besides the call.
struct Body {
    description: String,
    start: String,
    handovers: HandoverSpec,
    forward: DirectionSpec,
    reverse: DirectionSpec,
}

/// Slots at a drawn switch rate, or (with `grid_share`) every boundary of a 15-s grid at a drawn
/// phase; the text for the description.
fn slot_handovers(d: &mut Draw, grid_share: f64) -> (HandoverSpec, String) {
    if d.pick(
        "handovers.source",
        &[("grid", grid_share), ("slots", 1.0 - grid_share)],
    ) == "grid"
    {
        let first = d.get(&GRID_FIRST) as u64;
        (
            HandoverSpec::Grid {
                first_ms: first,
                period_ms: SLOT_MS,
            },
            format!("grid every 15 s from {:.1} s", first as f64 / 1000.0),
        )
    } else {
        let p = d.get(&SWITCH_P);
        (
            HandoverSpec::Slots { probability: p },
            format!("slots p={p:.2}"),
        )
    }
}

/// A slot-stepped log-normal capacity, clamped to `[median / 4, median x 4]`.
fn slot_capacity(median: f64, sigma: f64, rho: f64, within: f64) -> CapacitySpec {
    CapacitySpec::Lognormal(LognormalSpec {
        step: Step::Slot,
        median_mbps: median,
        sigma_log: sigma,
        rho,
        call_sigma_log: 0.0,
        within_sigma_log: within,
        min_mbps: round(median / 4.0, 3),
        max_mbps: round(median * 4.0, 2),
        stall: None,
    })
}

/// A per-second log-normal capacity, clamped to three log sds around the median.
fn second_capacity(median: f64, sigma: f64, rho: f64, stall: Option<StallSpec>) -> CapacitySpec {
    let min = round((median * (-3.0 * sigma).exp()).max(0.05), 3);
    let max = round(median * (3.0 * sigma).exp(), 2).max(min);
    CapacitySpec::Lognormal(LognormalSpec {
        step: Step::Second,
        median_mbps: median,
        sigma_log: sigma,
        rho,
        call_sigma_log: 0.0,
        within_sigma_log: 0.0,
        min_mbps: min,
        max_mbps: max,
        stall,
    })
}

/// The spans of a slotted delay.
struct SlottedSpans {
    median: &'static Span,
    spike_min: &'static Span,
    spike_span: &'static Span,
    spike_max: &'static Span,
    spike_ms: &'static Span,
}

const LOSSY_SLOTTED: SlottedSpans = SlottedSpans {
    median: &LOSSY_DELAY,
    spike_min: &LOSSY_SPIKE_MIN,
    spike_span: &LOSSY_SPIKE_SPAN,
    spike_max: &LOSSY_SPIKE_MAX,
    spike_ms: &LOSSY_SPIKE_MS,
};

/// `leo-lossy`'s spikes around the longer one-way delay of a path over inter-satellite links.
const PHASED_SLOTTED: SlottedSpans = SlottedSpans {
    median: &PHASED_DELAY,
    ..LOSSY_SLOTTED
};

/// Both directions' slotted delays: the forward from `spans`, the reverse around it (its
/// median a drawn ratio of the forward's, its innovations correlated with them).
fn slotted_delays(d: &mut Draw, spans: &SlottedSpans) -> (DelaySpec, DelaySpec, String) {
    let median = d.get(spans.median);
    let sigma = d.get(&DELAY_SIGMA);
    let rho = d.get(&DELAY_RHO);
    let jitter = d.get(&DELAY_JITTER);
    let spike_min = d.get(spans.spike_min);
    let spike_span = d.get(spans.spike_span);
    let spike_max = d.set(spans.spike_max, spike_min + spike_span);
    let spike_ms = d.get(spans.spike_ms);
    let forward = DelaySpec::Slotted(SlottedDelaySpec {
        median_ms: median,
        sigma_log: sigma,
        rho,
        correlation: 0.0,
        min_ms: round(median * 0.47, 1),
        max_ms: round(median * 2.45, 1),
        jitter_ms: jitter,
        jitter_rho: 0.83,
        spike_min_ms: spike_min,
        spike_max_ms: spike_max,
        spike_duration_ms: spike_ms as u32,
    });
    let ratio = d.get(&REV_DELAY_RATIO);
    let rev_median = round(median * ratio, 1);
    let rev_spike_min = d.get(&REV_SPIKE_MIN);
    let rev_spike_span = d.get(&REV_SPIKE_SPAN);
    let reverse = DelaySpec::Slotted(SlottedDelaySpec {
        median_ms: rev_median,
        sigma_log: d.get(&REV_DELAY_SIGMA),
        rho: d.get(&REV_DELAY_RHO),
        correlation: d.get(&REV_DELAY_CORR),
        min_ms: round(rev_median * 0.39, 1),
        max_ms: round(rev_median * 3.9, 1),
        jitter_ms: d.get(&REV_DELAY_JITTER),
        jitter_rho: 0.83,
        spike_min_ms: rev_spike_min,
        spike_max_ms: d.set(&REV_SPIKE_MAX, rev_spike_min + rev_spike_span),
        spike_duration_ms: d.get(&REV_SPIKE_MS) as u32,
    });
    let text = format!(
        "one-way {median:.0} ms, spikes {spike_min:.0}-{spike_max:.0} ms for {spike_ms:.0} ms"
    );
    (forward, reverse, text)
}

/// The LEO reverse capacity: slot-stepped (or per-second on a sparse path) around the downlink
/// figures, with the LeoCC fit's autocorrelation and within-slot spread.
fn leo_reverse_capacity(d: &mut Draw, step: Step) -> CapacitySpec {
    let median = d.get(&LEO_REV_CAP);
    let sigma = d.get(&LEO_REV_CAP_SIGMA);
    match step {
        Step::Slot => slot_capacity(median, sigma, 0.0, 0.058),
        Step::Second => second_capacity(median, sigma, 0.0, None),
    }
}

/// Boundary loss profiles of both directions: forward rows 0-3, reverse rows 0-1, each row the
/// one before times a drawn ratio.
fn boundary_profiles(d: &mut Draw) -> (Vec<f64>, Vec<f64>, String) {
    let r0 = d.get(&ROW0);
    let k1 = d.get(&ROW1_RATIO);
    let r1 = d.set(&ROW1, r0 * k1);
    let k2 = d.get(&ROW2_RATIO);
    let r2 = d.set(&ROW2, r1 * k2);
    let k3 = d.get(&ROW3_RATIO);
    let r3 = d.set(&ROW3, r2 * k3);
    let v0 = d.get(&REV_ROW0);
    let q1 = d.get(&REV_ROW1_RATIO);
    let v1 = d.set(&REV_ROW1, v0 * q1);
    let text = format!(
        "boundary rows {}/{}/{}/{} %",
        percent(r0),
        percent(r1),
        percent(r2),
        percent(r3)
    );
    (vec![r0, r1, r2, r3], vec![v0, v1], text)
}

fn direction(
    capacity: CapacitySpec,
    delay: DelaySpec,
    loss: LossSpec,
    buffer_ms: u32,
    handover: HandoverEffectSpec,
) -> DirectionSpec {
    DirectionSpec {
        capacity,
        delay,
        loss,
        buffer_ms: Some(buffer_ms),
        buffer_bytes: None,
        handover,
    }
}

fn profile(rows: Vec<f64>) -> HandoverEffectSpec {
    HandoverEffectSpec {
        boundary_loss_profile: rows,
        ..HandoverEffectSpec::default()
    }
}

/// What `leo-lossy` and `leo-phased` draw first, in this order: the start, the slots (the 15-s
/// grid with probability 0.25) and the slot-stepped uplink capacity around lagos.csv's.
struct LossySlots {
    start: String,
    handovers: HandoverSpec,
    ho_text: String,
    median: f64,
    cap: CapacitySpec,
}

fn lossy_slots(d: &mut Draw) -> LossySlots {
    let start = d.start();
    let (handovers, ho_text) = slot_handovers(d, 0.25);
    let median = d.get(&LOSSY_CAP);
    let cap = slot_capacity(
        median,
        d.get(&LOSSY_CAP_SIGMA),
        d.get(&LOSSY_CAP_RHO),
        d.get(&LOSSY_CAP_WITHIN),
    );
    LossySlots {
        start,
        handovers,
        ho_text,
        median,
        cap,
    }
}

/// Starlink-like: slot-stepped capacity, slotted delay with spikes, a boundary loss profile.
fn leo_lossy(d: &mut Draw) -> Body {
    let LossySlots {
        start,
        handovers,
        ho_text,
        median,
        cap,
    } = lossy_slots(d);
    let (fwd_delay, rev_delay, delay_text) = slotted_delays(d, &LOSSY_SLOTTED);
    let loss = d.get(&LOSSY_LOSS);
    let rev_loss = d.get(&LEO_REV_LOSS);
    let (fwd_rows, rev_rows, rows_text) = boundary_profiles(d);
    let buffer = d.get(&LEO_BUFFER) as u32;
    let rev_cap = leo_reverse_capacity(d, Step::Slot);
    Body {
        description: format!(
            "{ho_text}, {rows_text}, uplink {median:.1} Mbit/s, {delay_text}, random loss {:.2} %",
            loss * 100.0
        ),
        start,
        handovers,
        forward: direction(
            cap,
            fwd_delay,
            LossSpec::Bernoulli { rate: loss },
            buffer,
            profile(fwd_rows),
        ),
        reverse: direction(
            rev_cap,
            rev_delay,
            LossSpec::Bernoulli { rate: rev_loss },
            250,
            profile(rev_rows),
        ),
    }
}

/// Where a lossy phase must end, s after the boundary: 14.5 s is the end of the last half-second
/// bin the sender's phase detector tests (bins 1 to 28 of the 30 in a 15-s slot, 0.5-14.5 s;
/// pacer `actions::slot_phase`), so the whole phase is one it can find.
const PHASE_END_S: f64 = 14.5;

/// [`PHASE_END_S`] in 100-ms profile rows.
const PHASE_END_ROWS: usize = (PHASE_END_S * 1000.0) as usize / LOSS_PROFILE_ROW_MS as usize;

const _: () = assert!(PHASE_END_ROWS <= MAX_LOSS_PROFILE_ROWS);
const _: () = assert!(PHASE_START.hi + PHASE_LENGTH.hi <= PHASE_END_S);

/// A forward boundary loss profile that is zero from the boundary to `start_s`, `loss` for
/// `length_s` after it, and ends there (rows of [`LOSS_PROFILE_ROW_MS`], cut at
/// [`PHASE_END_ROWS`], which the drawn ranges never reach past).
fn phase_profile(start_s: f64, length_s: f64, loss: f64) -> Vec<f64> {
    let rows = |s: f64| (s * 1000.0 / LOSS_PROFILE_ROW_MS as f64).round().max(0.0) as usize;
    let from = rows(start_s).min(PHASE_END_ROWS);
    let to = from.saturating_add(rows(length_s)).min(PHASE_END_ROWS);
    let mut profile = vec![0.0; to];
    profile[from..].fill(loss);
    profile
}

/// Starlink over inter-satellite links: `leo-lossy`'s slots, capacity and spikes around a longer
/// one-way delay, but no loss at the boundary instant; instead a lossy phase later in every
/// slot, at every boundary whether the satellite changes or not, as the mmsys24 Lagos ISL ping
/// trace loses 4.9-5.5 % of its echoes 4.0-5.0 s after each reconfiguration and 0.15 % over the
/// rest of the slot (docs/experiments/mmsys24-2026-12-06.md, sections 1 and 4). The phase is on
/// the forward (video) direction only, as the mmsys24 scenario files put the trace's loss on the
/// uplink, the most it can have lost; the feedback direction has `leo-lossy`'s random loss. The
/// phase's numbers are drawn after the rest, in a fixed order: start, length, loss, then the
/// random forward loss.
fn leo_phased(d: &mut Draw) -> Body {
    let LossySlots {
        start,
        handovers,
        ho_text,
        median,
        cap,
    } = lossy_slots(d);
    let (fwd_delay, rev_delay, delay_text) = slotted_delays(d, &PHASED_SLOTTED);
    let rev_loss = d.get(&LEO_REV_LOSS);
    let buffer = d.get(&LEO_BUFFER) as u32;
    let rev_cap = leo_reverse_capacity(d, Step::Slot);
    let phase_start = d.get(&PHASE_START);
    let phase_length = d.get(&PHASE_LENGTH);
    let phase_loss = d.get(&PHASE_LOSS);
    let loss = d.get(&PHASED_LOSS);
    Body {
        description: format!(
            "{ho_text}, loss {} % over {phase_start:.1}-{:.1} s after each boundary, uplink {median:.1} Mbit/s, {delay_text}, random loss {:.2} %",
            percent(phase_loss),
            phase_start + phase_length,
            loss * 100.0
        ),
        start,
        handovers,
        forward: direction(
            cap,
            fwd_delay,
            LossSpec::Bernoulli { rate: loss },
            buffer,
            profile(phase_profile(phase_start, phase_length, phase_loss)),
        ),
        reverse: direction(
            rev_cap,
            rev_delay,
            LossSpec::Bernoulli { rate: rev_loss },
            250,
            HandoverEffectSpec::default(),
        ),
    }
}

/// LeoCC-like: boundaries bring delay spikes and a short delivery gap, and no loss.
fn leo_spiky(d: &mut Draw) -> Body {
    let start = d.start();
    let (handovers, ho_text) = slot_handovers(d, 0.5);
    let median = d.get(&SPIKY_CAP);
    let cap = slot_capacity(
        median,
        d.get(&SPIKY_CAP_SIGMA),
        d.get(&SPIKY_CAP_RHO),
        d.get(&SPIKY_CAP_WITHIN),
    );
    let spans = SlottedSpans {
        median: &SPIKY_DELAY,
        spike_min: &SPIKY_SPIKE_MIN,
        spike_span: &SPIKY_SPIKE_SPAN,
        spike_max: &SPIKY_SPIKE_MAX,
        spike_ms: &SPIKY_SPIKE_MS,
    };
    let (fwd_delay, rev_delay, delay_text) = slotted_delays(d, &spans);
    let loss = d.get(&SPIKY_LOSS);
    let rev_loss = d.get(&SPIKY_REV_LOSS);
    let buffer = d.get(&LEO_BUFFER) as u32;
    let rev_cap = leo_reverse_capacity(d, Step::Slot);
    let gap = d.get(&SPIKY_GAP) as u32;
    let effect = HandoverEffectSpec {
        outage_ms: gap,
        outage: OutageMode::Hold,
        ..HandoverEffectSpec::default()
    };
    Body {
        description: format!(
            "{ho_text}, {delay_text}, a {gap}-ms delivery gap at each, no boundary loss, uplink {median:.1} Mbit/s, random loss {:.3} %",
            loss * 100.0
        ),
        start,
        handovers,
        forward: direction(
            cap,
            fwd_delay,
            LossSpec::Bernoulli { rate: loss },
            buffer,
            effect.clone(),
        ),
        reverse: direction(
            rev_cap,
            rev_delay,
            LossSpec::Bernoulli { rate: rev_loss },
            250,
            effect,
        ),
    }
}

/// lagos.csv-like: Gilbert-Elliott bursts and capacity dips away from the boundaries too, on top
/// of a boundary loss profile.
fn leo_bursty(d: &mut Draw) -> Body {
    let start = d.start();
    let (handovers, ho_text) = slot_handovers(d, 0.0);
    let median = d.get(&BURSTY_CAP);
    let sigma = d.get(&BURSTY_CAP_SIGMA);
    let rho = d.get(&BURSTY_CAP_RHO);
    let stall = StallSpec {
        enter_per_s: d.get(&BURSTY_STALL_ENTER),
        mean_s: d.get(&BURSTY_STALL_MEAN),
        mbps: d.get(&BURSTY_STALL_MBPS),
    };
    let stall_text = format!(
        "dips {:.3}/s for {:.1} s to {:.2} Mbit/s",
        stall.enter_per_s, stall.mean_s, stall.mbps
    );
    let cap = second_capacity(median, sigma, rho, Some(stall));
    let (fwd_delay, rev_delay, delay_text) = slotted_delays(d, &LOSSY_SLOTTED);
    let (loss, loss_text) = gilbert_elliott(
        d,
        &BURSTY_BAD_SHARE,
        &BURSTY_BAD_TO_GOOD,
        &BURSTY_GOOD_TO_BAD,
        &BURSTY_LOSS_BAD,
        &BURSTY_LOSS_GOOD,
    );
    let rev_loss = d.get(&LEO_REV_LOSS);
    let (fwd_rows, rev_rows, rows_text) = boundary_profiles(d);
    let buffer = d.get(&LEO_BUFFER) as u32;
    let rev_cap = leo_reverse_capacity(d, Step::Slot);
    Body {
        description: format!(
            "{ho_text}, {loss_text}, {stall_text}, {rows_text}, uplink {median:.1} Mbit/s, {delay_text}"
        ),
        start,
        handovers,
        forward: direction(cap, fwd_delay, loss, buffer, profile(fwd_rows)),
        reverse: direction(
            rev_cap,
            rev_delay,
            LossSpec::Bernoulli { rate: rev_loss },
            250,
            profile(rev_rows),
        ),
    }
}

/// Sparse LEO: slot boundaries that rarely switch, an outage at each handover.
fn leo_sparse(d: &mut Draw) -> Body {
    let start = d.start();
    d.choices.insert("handovers.source".into(), "slots".into());
    let p = d.get(&SPARSE_SWITCH_P);
    let median = d.get(&SPARSE_CAP);
    let cap = second_capacity(
        median,
        d.get(&SPARSE_CAP_SIGMA),
        d.get(&SPARSE_CAP_RHO),
        None,
    );
    let spans = SlottedSpans {
        median: &SPARSE_DELAY,
        spike_min: &SPARSE_SPIKE_MIN,
        spike_span: &SPARSE_SPIKE_SPAN,
        spike_max: &SPARSE_SPIKE_MAX,
        spike_ms: &SPARSE_SPIKE_MS,
    };
    let (fwd_delay, rev_delay, delay_text) = slotted_delays(d, &spans);
    let loss = d.get(&SPARSE_LOSS);
    let rev_loss = d.get(&SPARSE_REV_LOSS);
    let outage = d.get(&SPARSE_OUTAGE) as u32;
    let buffer = d.get(&LEO_BUFFER) as u32;
    let rev_cap = leo_reverse_capacity(d, Step::Second);
    let effect = HandoverEffectSpec {
        outage_ms: outage,
        outage: OutageMode::Drop,
        ..HandoverEffectSpec::default()
    };
    Body {
        description: format!(
            "slots p={p:.3} ({:.2} handovers/min), {:.1}-s outage at each, uplink {median:.1} Mbit/s, {delay_text}, random loss {:.2} %",
            p * 4.0,
            f64::from(outage) / 1000.0,
            loss * 100.0
        ),
        start,
        handovers: HandoverSpec::Slots { probability: p },
        forward: direction(
            cap,
            fwd_delay,
            LossSpec::Bernoulli { rate: loss },
            buffer,
            effect.clone(),
        ),
        reverse: direction(
            rev_cap,
            rev_delay,
            LossSpec::Bernoulli { rate: rev_loss },
            250,
            effect,
        ),
    }
}

/// Terrestrial: per-second capacity with optional stalls, constant delay with jitter, no,
/// independent or bursty loss, no handovers.
fn terrestrial(d: &mut Draw) -> Body {
    let median = d.get(&TERR_CAP);
    let sigma = d.get(&TERR_CAP_SIGMA);
    let rho = d.get(&TERR_CAP_RHO);
    let stall = if d.chance("forward.capacity.stall", 0.5) {
        Some(StallSpec {
            enter_per_s: d.get(&TERR_STALL_ENTER),
            mean_s: d.get(&TERR_STALL_MEAN),
            mbps: d.get(&TERR_STALL_MBPS),
        })
    } else {
        None
    };
    let stall_text = stall.as_ref().map_or_else(
        || "no stalls".to_owned(),
        |s| format!("stalls {:.3}/s for {:.1} s", s.enter_per_s, s.mean_s),
    );
    let cap = second_capacity(median, sigma, rho, stall.clone());
    let rev_median = d.get(&TERR_REV_CAP);
    let rev_cap = second_capacity(
        rev_median,
        d.get(&TERR_REV_CAP_SIGMA),
        d.get(&TERR_REV_CAP_RHO),
        stall,
    );
    let ms = d.get(&TERR_DELAY);
    let jitter = d.get(&TERR_JITTER);
    let jitter_rho = d.get(&TERR_JITTER_RHO);
    let delay = DelaySpec::Constant {
        ms,
        jitter_ms: jitter,
        jitter_rho,
    };
    let (loss, loss_text) = match d.pick(
        "forward.loss.kind",
        &[("none", 0.4), ("bernoulli", 0.3), ("gilbert-elliott", 0.3)],
    ) {
        "bernoulli" => {
            let rate = d.get(&TERR_LOSS);
            (
                LossSpec::Bernoulli { rate },
                format!("random loss {:.2} %", rate * 100.0),
            )
        }
        "gilbert-elliott" => gilbert_elliott(
            d,
            &TERR_BAD_SHARE,
            &TERR_BAD_TO_GOOD,
            &TERR_GOOD_TO_BAD,
            &TERR_LOSS_BAD,
            &TERR_LOSS_GOOD,
        ),
        _ => (LossSpec::None, "no loss".to_owned()),
    };
    let buffer = d.get(&TERR_BUFFER) as u32;
    Body {
        description: format!(
            "no handovers, uplink {median:.1} Mbit/s (log sd {sigma:.2}, rho {rho:.2}), {stall_text}, {ms:.0} ms one-way, jitter {jitter:.1} ms, {loss_text}"
        ),
        start: super::schema::default_start(),
        handovers: HandoverSpec::None,
        forward: direction(
            cap,
            delay.clone(),
            loss,
            buffer,
            HandoverEffectSpec::default(),
        ),
        reverse: direction(
            rev_cap,
            delay,
            LossSpec::None,
            250,
            HandoverEffectSpec::default(),
        ),
    }
}

/// A Gilbert-Elliott chain whose bad state holds a drawn share of the packets.
fn gilbert_elliott(
    d: &mut Draw,
    bad_share: &Span,
    bad_to_good: &Span,
    good_to_bad: &Span,
    loss_bad: &Span,
    loss_good: &Span,
) -> (LossSpec, String) {
    let share = d.get(bad_share);
    let p_bg = d.get(bad_to_good);
    let p_gb = d.set(good_to_bad, share * p_bg / (1.0 - share));
    let lb = d.get(loss_bad);
    let lg = d.get(loss_good);
    let text = format!(
        "Gilbert-Elliott bursts ({:.1} % of packets in {:.0}-packet bursts losing {:.0} %, {:.2} % outside)",
        share * 100.0,
        1.0 / p_bg,
        lb * 100.0,
        lg * 100.0
    );
    (
        LossSpec::GilbertElliott {
            p_good_to_bad: p_gb,
            p_bad_to_good: p_bg,
            loss_good: lg,
            loss_bad: lb,
        },
        text,
    )
}

/// `text` without the keys of a `[*.handover]` table that only restate the defaults (no outage,
/// no burst), and without such a table when nothing else is left in it: what a reader of the
/// file needs to see is what a handover does, not what it does not. The file reads back the
/// same (the test `every_drawn_file_parses_and_validates_through_the_loader` holds it to that).
fn without_default_handover(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut sections: Vec<Vec<&str>> = vec![Vec::new()];
    for line in text.lines() {
        if line.starts_with('[') {
            sections.push(Vec::new());
        }
        if let Some(last) = sections.last_mut() {
            last.push(line);
        }
    }
    for section in &sections {
        let is_handover = section
            .first()
            .is_some_and(|h| h.starts_with('[') && h.ends_with(".handover]"));
        if !is_handover {
            out.extend(section);
            continue;
        }
        let no_outage = section.contains(&"outage_ms = 0");
        let kept: Vec<&str> = section
            .iter()
            .copied()
            .filter(|l| {
                !(*l == "outage_ms = 0"
                    || (no_outage && *l == "outage = \"drop\"")
                    || *l == "loss_burst_rate = 0.0"
                    || *l == "loss_burst_ms = 0")
            })
            .collect();
        if kept.iter().skip(1).any(|l| !l.trim().is_empty()) {
            out.extend(kept);
        }
    }
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    let mut joined = out.join("\n");
    joined.push('\n');
    joined
}

/// A probability as a percentage for a description: whole above 10 %, one decimal below.
fn percent(p: f64) -> String {
    let x = p * 100.0;
    if x >= 10.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn round(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, ScenarioPaths};

    const DRAWS: usize = 500;

    fn paths() -> ScenarioPaths {
        ScenarioPaths::workspace()
    }

    /// The value at a dotted path (`forward.handover.boundary_loss_profile[2]`) of a TOML table.
    fn lookup(table: &toml::Table, name: &str) -> Option<f64> {
        let mut value: Option<&toml::Value> = None;
        for part in name.split('.') {
            let (key, index) = match part.split_once('[') {
                Some((key, rest)) => (key, rest.trim_end_matches(']').parse::<usize>().ok()),
                None => (part, None),
            };
            let next = match value {
                None => table.get(key),
                Some(v) => v.as_table()?.get(key),
            };
            value = match index {
                Some(i) => next?.as_array()?.get(i),
                None => next,
            };
        }
        match value? {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_another_seed_others() {
        let a = draw_paths(30, 7, 600).unwrap();
        let b = draw_paths(30, 7, 600).unwrap();
        let c = draw_paths(30, 8, 600).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.toml, y.toml);
        }
        let same = a.iter().zip(&c).filter(|(x, y)| x.toml == y.toml).count();
        assert_eq!(same, 0, "seed 8 repeated paths of seed 7");
        // A shorter draw is a prefix of a longer one.
        let short = draw_paths(5, 7, 600).unwrap();
        for (x, y) in short.iter().zip(&a) {
            assert_eq!(x.toml, y.toml);
        }
    }

    #[test]
    fn every_drawn_file_parses_and_validates_through_the_loader() {
        let drawn = draw_paths(DRAWS, 11, 600).unwrap();
        for p in &drawn {
            let s = Scenario::parse(&p.toml, &p.file_name(), &paths())
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", p.name(), p.toml));
            assert_eq!(s.file, p.file, "{} does not read back as drawn", p.name());
            assert_eq!(s.file.name, p.name());
            assert_eq!(s.file.kind, ScenarioKind::Generated);
            assert!(!s.file.forward.uses_files() && !s.file.reverse.uses_files());
            assert!(
                s.file.description.starts_with(p.family.name()),
                "{}",
                s.file.description
            );
            assert_eq!(s.file.call.duration_s, 600);
            assert_eq!(
                (
                    s.file.call.fps,
                    s.file.call.min_bitrate_kbps,
                    s.file.call.start_bitrate_kbps,
                    s.file.call.max_bitrate_kbps
                ),
                (30, 50, 300, 2500)
            );
        }
    }

    #[test]
    fn every_parameter_stays_in_its_documented_range() {
        let drawn = draw_paths(DRAWS, 3, 600).unwrap();
        // Per family and span name: lowest and highest value drawn.
        let mut seen: BTreeMap<(Family, &str), (f64, f64)> = BTreeMap::new();
        for p in &drawn {
            let table: toml::Table = toml::from_str(&p.toml).unwrap();
            for (name, &v) in &p.params {
                let span = range_of(p.family, name)
                    .unwrap_or_else(|| panic!("{} drew {name}, which has no range", p.name()));
                assert!(
                    v >= span.lo && v <= span.hi,
                    "{}: {name} = {v} outside [{}, {}]",
                    p.name(),
                    span.lo,
                    span.hi
                );
                if span.is_field() {
                    assert_eq!(
                        lookup(&table, name),
                        Some(v),
                        "{}: the file's {name} is not the drawn value",
                        p.name()
                    );
                }
                let e = seen.entry((p.family, span.name)).or_insert((v, v));
                e.0 = e.0.min(v);
                e.1 = e.1.max(v);
            }
        }
        // Every documented span is drawn by each of its families, and a drawn one over most of
        // its range (a derived one reaches its ends only where its inputs all do).
        for row in RANGES {
            for &f in row.families {
                let &(lo, hi) = seen
                    .get(&(f, row.span.name))
                    .unwrap_or_else(|| panic!("{} never drew {}", f.name(), row.span.name));
                let (covered, width) = match row.span.scale {
                    Scale::Derived => continue,
                    Scale::Linear => (hi - lo, row.span.hi - row.span.lo),
                    Scale::Log => ((hi / lo).ln(), (row.span.hi / row.span.lo).ln()),
                };
                assert!(
                    covered >= 0.5 * width,
                    "{} drew {} only in [{lo}, {hi}] of [{}, {}]",
                    f.name(),
                    row.span.name,
                    row.span.lo,
                    row.span.hi
                );
            }
        }
    }

    #[test]
    fn the_derived_fields_keep_their_relations() {
        for p in draw_paths(DRAWS, 5, 600).unwrap() {
            for dir in [&p.file.forward, &p.file.reverse] {
                match &dir.capacity {
                    CapacitySpec::Lognormal(l) => {
                        assert!(l.min_mbps > 0.0 && l.min_mbps <= l.median_mbps);
                        assert!(l.max_mbps >= l.median_mbps, "{}", p.name());
                    }
                    other => panic!("{}: capacity {other:?}", p.name()),
                }
                if let DelaySpec::Slotted(s) = &dir.delay {
                    assert!(s.min_ms <= s.median_ms && s.median_ms <= s.max_ms);
                    assert!(s.spike_min_ms <= s.spike_max_ms);
                }
                if let LossSpec::GilbertElliott {
                    p_good_to_bad,
                    p_bad_to_good,
                    ..
                } = dir.loss
                {
                    let share = p.params["~forward.loss.bad_share"];
                    let implied = p_good_to_bad / (p_good_to_bad + p_bad_to_good);
                    assert!(
                        (implied - share).abs() < 1e-3 * share.max(0.01),
                        "{}: bad share {implied} against {share}",
                        p.name()
                    );
                }
                // A phased profile rises at its phase: its shape has a test of its own.
                let rows = &dir.handover.boundary_loss_profile;
                assert!(
                    p.family == Family::LeoPhased || rows.windows(2).all(|w| w[1] <= w[0]),
                    "{}: {rows:?}",
                    p.name()
                );
            }
        }
    }

    #[test]
    fn a_phased_paths_forward_profile_is_zero_until_its_phase_and_its_loss_over_it() {
        let drawn = draw_paths(DRAWS, 1, 600).unwrap();
        let phased: Vec<&DrawnPath> = drawn
            .iter()
            .filter(|p| p.family == Family::LeoPhased)
            .collect();
        assert!(phased.len() >= 20, "{} leo-phased paths", phased.len());
        for p in phased {
            let start = p.params["~phase_start_s"];
            let length = p.params["~phase_length_s"];
            let loss = p.params["~phase_loss"];
            let fwd = &p.file.forward.handover;
            let rows = &fwd.boundary_loss_profile;
            let from = (start * 10.0).round() as usize;
            let to = from + (length * 10.0).round() as usize;
            assert!(from >= 10 && to <= 145, "{}: rows {from}-{to}", p.name());
            assert_eq!(rows.len(), to, "{}: {rows:?}", p.name());
            for k in 0..MAX_LOSS_PROFILE_ROWS {
                let want = if (from..to).contains(&k) { loss } else { 0.0 };
                assert_eq!(
                    rows.get(k).copied().unwrap_or(0.0),
                    want,
                    "{}: row {k} of {rows:?} (phase {start}-{} s, loss {loss})",
                    p.name(),
                    start + length
                );
            }
            // The same rows at a boundary without a handover; no loss at the instant itself, and
            // none of it on the feedback direction.
            assert_eq!(fwd.no_handover_loss_profile, None, "{}", p.name());
            assert_eq!(fwd.no_handover_profile(), rows.as_slice());
            assert_eq!(fwd.outage_ms, 0);
            assert_eq!(fwd.loss_burst_rate, 0.0);
            assert_eq!(p.file.reverse.handover, HandoverEffectSpec::default());
            let LossSpec::Bernoulli { rate } = p.file.forward.loss else {
                panic!("{}: forward loss {:?}", p.name(), p.file.forward.loss);
            };
            assert!(
                rate < loss,
                "{}: random loss {rate} against {loss}",
                p.name()
            );
            let over = format!(
                "loss {} % over {start:.1}-{:.1} s after each boundary",
                percent(loss),
                start + length
            );
            assert!(p.file.description.contains(&over), "{}", p.file.description);
        }
    }

    #[test]
    fn a_phase_profile_never_passes_the_detectors_last_bin() {
        assert_eq!(phase_profile(4.0, 1.0, 0.05).len(), 50);
        assert_eq!(phase_profile(4.0, 1.0, 0.05)[39..41], [0.0, 0.05]);
        for (start, length) in [
            (12.0, 2.5),
            (14.0, 2.5),
            (100.0, 1.0),
            (1.0, f64::INFINITY),
            (f64::MAX, f64::MAX),
        ] {
            let rows = phase_profile(start, length, 0.05);
            assert!(rows.len() <= PHASE_END_ROWS, "{start} + {length}");
        }
        assert!(phase_profile(f64::NAN, f64::NAN, 0.05).is_empty());
        let from_zero = phase_profile(-3.0, 1.0, 0.05);
        assert!(from_zero.len() == 10 && from_zero.iter().all(|&p| p == 0.05));
    }

    #[test]
    fn each_family_appears_near_its_weight_with_its_own_shape() {
        let drawn = draw_paths(DRAWS, 1, 600).unwrap();
        let total: f64 = Family::ALL.iter().map(|f| f.weight()).sum();
        assert!((total - 1.0).abs() < 1e-12);
        for f in Family::ALL {
            let of: Vec<&DrawnPath> = drawn.iter().filter(|p| p.family == f).collect();
            let share = of.len() as f64 / DRAWS as f64;
            // Binomial sd at 500 draws is at most 0.022: 4 sd.
            assert!(
                (share - f.weight()).abs() < 0.09,
                "{}: {share} against {}",
                f.name(),
                f.weight()
            );
            for p in of {
                let fwd = &p.file.forward;
                match f {
                    Family::LeoLossy => {
                        assert_eq!(fwd.handover.boundary_loss_profile.len(), 4);
                        assert!(matches!(fwd.loss, LossSpec::Bernoulli { .. }));
                    }
                    Family::LeoPhased => {
                        let rows = &fwd.handover.boundary_loss_profile;
                        assert!((15..=145).contains(&rows.len()), "{}", p.name());
                        assert!(rows[..10].iter().all(|&r| r == 0.0), "{}", p.name());
                        assert!(rows.last().is_some_and(|&r| r >= 0.02), "{}", p.name());
                        assert!(matches!(fwd.loss, LossSpec::Bernoulli { rate } if rate <= 0.005));
                        assert!(
                            matches!(fwd.delay, DelaySpec::Slotted(ref s) if s.median_ms >= 22.0 && s.spike_min_ms >= 20.0)
                        );
                        assert!(p.file.reverse.handover.boundary_loss_profile.is_empty());
                    }
                    Family::LeoSpiky => {
                        assert!(fwd.handover.boundary_loss_profile.is_empty());
                        assert!(p.file.reverse.handover.boundary_loss_profile.is_empty());
                        assert!(
                            matches!(fwd.delay, DelaySpec::Slotted(ref s) if s.spike_min_ms >= 15.0)
                        );
                        assert!((30..=180).contains(&fwd.handover.outage_ms));
                        assert_eq!(fwd.handover.outage, OutageMode::Hold);
                        assert_eq!(p.file.reverse.handover, fwd.handover);
                    }
                    Family::LeoBursty => {
                        assert!(matches!(fwd.loss, LossSpec::GilbertElliott { .. }));
                        assert!(
                            matches!(fwd.capacity, CapacitySpec::Lognormal(ref l) if l.stall.is_some())
                        );
                    }
                    Family::LeoSparse => {
                        assert!(
                            matches!(p.file.handovers, HandoverSpec::Slots { probability } if probability <= 0.25)
                        );
                    }
                    Family::Terrestrial => {
                        assert_eq!(p.file.handovers, HandoverSpec::None);
                        assert!(matches!(fwd.delay, DelaySpec::Constant { .. }));
                    }
                }
                if f != Family::Terrestrial {
                    assert_ne!(p.file.handovers, HandoverSpec::None, "{}", p.name());
                }
            }
        }
        // Both handover variants of the grid families occur.
        for f in [Family::LeoLossy, Family::LeoPhased, Family::LeoSpiky] {
            for source in ["grid", "slots"] {
                assert!(
                    drawn.iter().any(|p| p.family == f
                        && p.choices.get("handovers.source").map(String::as_str) == Some(source)),
                    "{} never drew {source}",
                    f.name()
                );
            }
        }
    }

    #[test]
    fn no_drawn_path_repeats_a_shipped_scenario() {
        let paths = paths();
        let shipped: Vec<ScenarioFile> = paths
            .shipped()
            .iter()
            .map(|n| Scenario::load(n, &paths).unwrap().file)
            .collect();
        assert!(!shipped.is_empty());
        for p in draw_paths(DRAWS, 2, 600).unwrap() {
            for s in &shipped {
                assert!(
                    p.file.forward != s.forward
                        && p.file.forward.capacity != s.forward.capacity
                        && p.file.forward.delay != s.forward.delay,
                    "{} repeats {}",
                    p.name(),
                    s.name
                );
            }
        }
    }

    #[test]
    fn bad_arguments_are_refused_with_the_reason() {
        assert_eq!(draw_paths(0, 1, 600).unwrap_err(), FamilyError::Count(0));
        assert_eq!(
            draw_paths(MAX_PATHS + 1, 1, 600).unwrap_err(),
            FamilyError::Count(MAX_PATHS + 1)
        );
        let e = draw_paths(1, 1, 0).unwrap_err();
        assert!(e.to_string().contains("1 to 86400 s, got 0 s"), "{e}");
        assert!(draw_paths(1, 1, super::super::schema::MAX_CALL_S + 1).is_err());
    }

    #[test]
    fn the_manifest_counts_every_family_and_records_the_draws() {
        let drawn = draw_paths(40, 9, 120).unwrap();
        let m = manifest(&drawn, 9, 120);
        assert_eq!(m.count, 40);
        assert_eq!(m.drawn.values().sum::<usize>(), 40);
        assert_eq!(m.drawn.len(), Family::ALL.len());
        assert_eq!(m.paths[7].file, "path-0007.toml");
        assert_eq!(m.paths[7].params, drawn[7].params);
        assert!(m.paths.iter().all(|p| !p.params.is_empty()));
    }

    #[test]
    fn the_docs_carry_the_range_table() {
        let table = range_table();
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/path-family.md"),
        )
        .unwrap();
        assert!(
            doc.contains(&table),
            "docs/path-family.md does not hold the range table; paste:\n{table}"
        );
        let module: String = table.lines().map(|l| format!("//! {l}\n")).collect();
        assert!(
            include_str!("family.rs").contains(&module),
            "the module docs do not hold the range table"
        );
    }
}

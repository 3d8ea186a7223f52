//! The dish as a live handover source (`call --handover dish:ADDR` or `calibrated:dish:ADDR`,
//! built by [`super::build`]): the detector driver polls the dish's obstruction map
//! once per second and every detected handover feeds a mirror predictor, or every verdict at a
//! slot boundary (switched or not) a calibrated one. A dish that does not answer or stops
//! answering is not an error for the call: the source's `forecast` fails with the reason, the
//! policy falls back to WebRTC's 2000 ms and records why, and the status line shows it. It fails
//! as soon as no map has come for [`STALE_AFTER`] (the detector itself tolerates ten failed
//! polls before it gives up, and a forecast from a silent dish would be stale), and the feeder
//! connects again every [`RECONNECT_EVERY`] until the dish answers: a dish (or its gRPC server)
//! that restarts mid-call gives forecasts again once it polls.

use chrono::{DateTime, Utc};
use handover_predictor::dish::{DishClient, DriverConfig, run_detector_with};
use handover_predictor::predict::{Calibrated, Mirror, SLOT};
use handover_predictor::{Forecast, HandoverSource, SourceError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long without a polled map before the source says the dish is silent (it polls once a
/// second).
pub const STALE_AFTER: Duration = Duration::from_secs(3);

/// How long the feeder waits before it connects again after the detector stopped.
pub const RECONNECT_EVERY: Duration = Duration::from_secs(1);

/// What the dish feeder has to say.
#[derive(Debug)]
struct DishState {
    mirror: Mirror,
    /// The calibrated predictor, once the first verdict has dated a slot boundary (its grid).
    calibrated: Option<Calibrated>,
    /// Whether the source answers with the calibrated predictor instead of the mirror.
    use_calibrated: bool,
    /// Why the feeder stopped, if it did and has not polled a map since.
    failed: Option<String>,
    /// Polls so far.
    observations: u64,
    /// When the last map was polled.
    last_poll: Option<Instant>,
    /// Handovers detected so far.
    handovers: u64,
}

/// The dish source: a [`Mirror`] fed by the detector driver's task.
pub struct DishSource {
    state: Arc<Mutex<DishState>>,
    task: tokio::task::JoinHandle<()>,
}

impl DishSource {
    /// Connects to the dish at `addr` in the background and starts the detector; `epoch` is the
    /// call's time zero.
    pub fn start(addr: String, epoch: Instant) -> Self {
        Self::start_with(addr, epoch, false)
    }

    /// The same, answering with a [`Calibrated`] predictor that learns from every verdict.
    pub fn start_calibrated(addr: String, epoch: Instant) -> Self {
        Self::start_with(addr, epoch, true)
    }

    fn start_with(addr: String, epoch: Instant, use_calibrated: bool) -> Self {
        let state = Arc::new(Mutex::new(DishState {
            calibrated: None,
            use_calibrated,
            mirror: Mirror::new(epoch),
            failed: None,
            observations: 0,
            last_poll: None,
            handovers: 0,
        }));
        let feeder = Arc::clone(&state);
        let task = tokio::spawn(async move {
            loop {
                let reason = match feed(&addr, &feeder).await {
                    Ok(()) => format!("dish {addr}: the detector stopped"),
                    Err(e) => e,
                };
                lock(&feeder).failed = Some(reason);
                tokio::time::sleep(RECONNECT_EVERY).await;
            }
        });
        Self { state, task }
    }
}

impl Drop for DishSource {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<DishState>) -> std::sync::MutexGuard<'_, DishState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Connects, anchors the dish's clock to ours, and runs the detector until it fails.
async fn feed(addr: &str, state: &Arc<Mutex<DishState>>) -> Result<(), String> {
    let client = DishClient::connect(addr.to_owned())
        .await
        .map_err(|e| format!("dish {addr} unreachable: {e}"))?;
    let status = client
        .status()
        .await
        .map_err(|e| format!("dish {addr} does not answer: {e}"))?;
    // Dish time (the simulated dish reports it; a real one does not: the local UTC clock) at
    // the instant we asked.
    let anchor: (DateTime<Utc>, Instant) =
        (status.dish_time.unwrap_or_else(Utc::now), Instant::now());
    let to_instant = move |at: DateTime<Utc>| {
        let offset = (at - anchor.0).to_std().unwrap_or(Duration::ZERO);
        anchor.1 + offset
    };
    let feeder = Arc::clone(state);
    run_detector_with(&client, DriverConfig::default(), move |observation| {
        let mut s = lock(&feeder);
        s.observations += 1;
        s.last_poll = Some(Instant::now());
        s.failed = None;
        if let Some(verdict) = observation.verdict {
            let at = to_instant(verdict.at);
            // The detector dates each verdict at its slot boundary: the grid's reference.
            s.calibrated
                .get_or_insert_with(|| {
                    Calibrated::grid(at, SLOT)
                        .unwrap_or_else(|_| Calibrated::slot_grid(at, verdict.at))
                })
                .observe(at, verdict.handover);
            if verdict.handover {
                s.handovers += 1;
                s.mirror.observe(at);
            }
        }
    })
    .await
    .map(|_| ())
    .map_err(|e| format!("dish {addr} detector stopped: {e}"))
}

impl HandoverSource for DishSource {
    fn name(&self) -> &str {
        "dish"
    }

    fn forecast(&mut self, now: Instant) -> Result<Forecast, SourceError> {
        let mut s = lock(&self.state);
        if s.failed.is_none()
            && let Some(last) = s.last_poll
            && now.saturating_duration_since(last) >= STALE_AFTER
        {
            return Err(SourceError::Unavailable {
                source_name: "dish".into(),
                reason: format!(
                    "dish silent: no obstruction map for {} s",
                    now.saturating_duration_since(last).as_secs()
                ),
            });
        }
        if s.use_calibrated && s.failed.is_none() {
            return match s.calibrated.as_mut() {
                Some(calibrated) => calibrated.forecast(now),
                None => Err(SourceError::Unavailable {
                    source_name: "dish".into(),
                    reason: "no slot boundary judged yet".into(),
                }),
            };
        }
        if let Some(reason) = &s.failed {
            return Err(SourceError::Unavailable {
                source_name: "dish".into(),
                reason: reason.clone(),
            });
        }
        if s.observations == 0 {
            return Err(SourceError::Unavailable {
                source_name: "dish".into(),
                reason: "no obstruction map polled yet".into(),
            });
        }
        s.mirror.forecast(now)
    }
}

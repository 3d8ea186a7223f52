//! Shared pieces of the real-call tests: an answerer on a free loopback port that records its
//! events, and a caller configuration.

#![allow(dead_code)]

use pacer::CwndMode;
use pacer::Decision;
use pacer::telemetry::IntervalRecord;
use rtc_client::call::{BweChoice, FecChoice, NackChoice, PolicyChoice, SenderOptions};
use rtc_client::forecast::ForecastSpec;
use rtc_client::live::answer::{AnswerConfig, AnswerEvent, AnswerServer};
use rtc_client::live::call::{LinkSetup, LiveCallConfig, StatusEvent};
use rtc_client::live::status::StatusLine;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// An answerer on 127.0.0.1 (free port) and what it reported.
pub struct Answerer {
    pub server: AnswerServer,
    pub events: Arc<Mutex<Vec<AnswerEvent>>>,
}

impl Answerer {
    pub async fn start() -> Self {
        Self::with_fec(true).await
    }

    /// An answerer that accepts FlexFEC-03 offers (`fec`) or answers them without it.
    pub async fn with_fec(fec: bool) -> Self {
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&events);
        let server = AnswerServer::start(
            AnswerConfig {
                listen: "127.0.0.1:0".parse().unwrap(),
                allow_non_loopback: false,
                fec,
                web: None,
                token: None,
                tls: None,
                receiver_raise: None,
            },
            move |event| sink.lock().unwrap().push(event),
        )
        .await
        .expect("the answerer starts");
        Self { server, events }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.server.local_addr())
    }

    /// Whether the answerer reported the end of a call within `wait`.
    pub async fn saw_end(&self, wait: Duration) -> Option<String> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let ended = self.events.lock().unwrap().iter().find_map(|e| match e {
                AnswerEvent::Ended { summary, .. } => Some(summary.clone()),
                _ => None,
            });
            if ended.is_some() || tokio::time::Instant::now() > deadline {
                return ended;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The project's default sender.
pub fn default_sender() -> SenderOptions {
    SenderOptions {
        bwe: BweChoice::GoogCc,
        nack: NackChoice::Libwebrtc,
        cwnd: CwndMode::Pushback,
        keyframe_flush: false,
        fec: FecChoice::Libwebrtc,
    }
}

/// A call to `peer` with the given policy, source, link and times.
pub fn config(
    peer: String,
    duration: Duration,
    interval: Duration,
    policy: PolicyChoice,
    handover: ForecastSpec,
    link: Option<LinkSetup>,
) -> LiveCallConfig {
    LiveCallConfig {
        peer,
        token: None,
        ca: None,
        duration,
        policy,
        handover,
        link,
        decision_interval: interval,
        sender: default_sender(),
        seed: 7,
        local_ip: "127.0.0.1".parse().unwrap(),
        video: Default::default(),
        shadow: None,
        shadow_compared: None,
    }
}

/// What the caller's status callback saw.
#[derive(Default)]
pub struct Seen {
    pub statuses: Vec<StatusLine>,
    pub decisions: Vec<Decision>,
    pub lines: Vec<String>,
}

impl Seen {
    pub fn record(&mut self, event: StatusEvent<'_>) {
        match event {
            StatusEvent::Connected { .. } => {}
            StatusEvent::Status(s) => self.statuses.push(s.clone()),
            StatusEvent::Decision(d) => self.decisions.push(d.clone()),
            StatusEvent::Interval(r) => self
                .lines
                .push(serde_json::to_string(r).expect("a record serialises")),
        }
    }
}

/// Every telemetry line parses as the simulator's record and validates.
pub fn parse_and_validate(lines: &[String]) -> Vec<IntervalRecord> {
    lines
        .iter()
        .map(|line| {
            let record: IntervalRecord = serde_json::from_str(line).expect("the line parses");
            record.validate().expect("the record validates");
            record
        })
        .collect()
}

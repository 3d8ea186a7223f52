//! The chains written once: a simulated call and a real call build the same sender chain and
//! the same receiver chain for the same options, a real peer connection adding only what a
//! peer connection needs (docs/architecture.md, "The call engine").

use pacer::sender::ChainKind;
use rtc_client::call::chains::{CallPadding, receiver_chain, sender_chain};
use rtc_client::call::{BweChoice, FecChoice, NackChoice, SenderOptions, TimedActions};
use rtc_client::live::peer::{self, PLI_TAP_SLOT};
use rtc_client::live::shadow::SENT_TAP_SLOT;
use rtc_interceptor::{Registry, Slot};
use std::collections::BTreeMap;

/// The interceptors of a registry by slot, a peer connection's stream-binding wrapper taken off
/// (it binds the implied streams, which the simulator binds itself, and forwards the rest).
fn by_slot(registry: &Registry) -> BTreeMap<Slot, String> {
    registry
        .slots()
        .into_iter()
        .map(|(slot, name)| {
            let name = name
                .strip_prefix("BindAlso<")
                .and_then(|n| n.strip_suffix('>'))
                .map_or(name.clone(), str::to_owned);
            (slot, name)
        })
        .collect()
}

fn every_option() -> Vec<SenderOptions> {
    let mut all = Vec::new();
    for nack in NackChoice::ALL {
        for bwe in BweChoice::ALL {
            for fec in [FecChoice::Libwebrtc, FecChoice::Off] {
                for cwnd in [pacer::CwndMode::Pushback, pacer::CwndMode::Pacer] {
                    all.push(SenderOptions {
                        bwe,
                        nack,
                        cwnd,
                        keyframe_flush: true,
                        fec,
                    });
                }
            }
        }
    }
    all
}

#[test]
fn a_simulated_and_a_real_call_build_the_same_sender_chain_for_the_same_options() {
    for options in every_option() {
        for actions in [None, Some(TimedActions::all().config())] {
            let (simulated, _) = sender_chain(
                Registry::new(),
                options,
                actions,
                CallPadding::Own,
                ChainKind::Direct,
            )
            .unwrap();
            let real = peer::sender_chain(options, actions, true).unwrap();
            let simulated = by_slot(&simulated);
            let mut real = by_slot(&real.registry);
            for (slot, name) in &simulated {
                assert_eq!(
                    real.remove(slot).as_ref(),
                    Some(name),
                    "{options:?}: the real chain holds another interceptor at {slot:?}"
                );
            }
            // What only a peer connection has: RTCP reports, the PLI tap, the tap that keeps
            // sent packets for a shadow receiver, and the receive-side placeholders webrtc-rs's helpers put on every peer (idle on a send-only one).
            let mut extra: Vec<Slot> = real.keys().copied().collect();
            extra.retain(|s| {
                ![
                    Slot::ReceiverReport,
                    Slot::SenderReport,
                    PLI_TAP_SLOT,
                    SENT_TAP_SLOT,
                    Slot::TwccReceiver,
                    Slot::NackGenerator,
                ]
                .contains(s)
            });
            assert!(
                extra.is_empty(),
                "{options:?}: only the real chain has {extra:?}"
            );
            assert!(real.contains_key(&Slot::SenderReport) && real.contains_key(&PLI_TAP_SLOT));
            assert!(real.contains_key(&SENT_TAP_SLOT));
        }
    }
}

#[test]
fn a_simulated_and_a_real_call_build_the_same_receiver_chain_for_the_same_options() {
    for nack in NackChoice::ALL {
        let (simulated, _) = receiver_chain(nack, ChainKind::Direct);
        let real = peer::receiver_chain(nack, true).unwrap();
        let simulated = by_slot(&simulated);
        let mut real = by_slot(&real.registry);
        assert!(real.remove(&Slot::SenderReport).is_some(), "{nack:?}");
        assert_eq!(simulated, real, "{nack:?}");
    }
}

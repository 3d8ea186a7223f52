//! The real-time relay over real loopback sockets: each direction applies its own link.

#![cfg(feature = "live")]

use rtc_client::link::{Capacity, Delay, Link, LinkConfig, Loss};
use rtc_client::live::relay::RelaySockets;
use std::time::{Duration, Instant};
use tokio::net::UdpSocket;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_relay_delays_one_way_and_drops_the_other() {
    let caller = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let answerer = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let sockets = RelaySockets::bind("127.0.0.1".parse().unwrap())
        .await
        .unwrap();
    let (a, b) = (
        sockets.caller_facing().unwrap(),
        sockets.answerer_facing().unwrap(),
    );
    // Forward: 1 Mbit/s and 60 ms; reverse: everything lost.
    let forward = LinkConfig::new(Capacity::constant(1_000_000))
        .with_delay(Delay::constant(Duration::from_millis(60)));
    let reverse = LinkConfig::new(Capacity::constant(1_000_000))
        .with_loss(Loss::Bernoulli { probability: 1.0 });
    let epoch = Instant::now();
    let relay = sockets.start(
        caller.local_addr().unwrap(),
        answerer.local_addr().unwrap(),
        Link::new(forward, 1).unwrap(),
        Link::new(reverse, 2).unwrap(),
        epoch,
    );

    // Five 1250-byte datagrams sent back to back: 10 ms each at 1 Mbit/s, then 60 ms.
    let sent = Instant::now();
    for i in 0..5u8 {
        caller.send_to(&[i; 1250], a).await.unwrap();
    }
    let mut buf = [0u8; 2000];
    let mut arrivals = Vec::new();
    for i in 0..5u8 {
        let (n, from) = tokio::time::timeout(Duration::from_secs(2), answerer.recv_from(&mut buf))
            .await
            .expect("the datagram arrives")
            .unwrap();
        assert_eq!((n, buf[0], from), (1250, i, b), "in order, from B");
        arrivals.push(sent.elapsed());
    }
    // The first leaves after its own transmission and the propagation delay; each next one a
    // transmission time later (loose upper bounds: a loaded CI machine wakes late).
    assert!(arrivals[0] >= Duration::from_millis(70), "{arrivals:?}");
    assert!(arrivals[4] >= Duration::from_millis(110), "{arrivals:?}");
    assert!(arrivals[4] < Duration::from_millis(600), "{arrivals:?}");

    // The reverse link loses everything.
    for _ in 0..5 {
        answerer.send_to(b"feedback", b).await.unwrap();
    }
    let nothing =
        tokio::time::timeout(Duration::from_millis(300), caller.recv_from(&mut buf)).await;
    assert!(nothing.is_err(), "a datagram crossed a link that loses all");

    let stats = relay.stop().await;
    assert_eq!((stats.forward.offered, stats.forward.delivered), (5, 5));
    assert_eq!((stats.reverse.offered, stats.reverse.dropped), (5, 5));
}

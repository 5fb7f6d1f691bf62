//! Shared receive queues: receives posted once for many QPs, each taken by the
//! QP whose message needs one (spec §6.7).

use alloc::collections::{BTreeMap, VecDeque};

use crate::Event;
use crate::verbs::{RecvWr, VerbsError};

/// A shared receive queue.
#[derive(Debug)]
pub(crate) struct Srq {
    /// Protection domain: its receives' keys, and its QPs', belong to it.
    pub pd: u32,
    max_wr: usize,
    /// Armed limit (0: not armed).
    limit: u32,
    recvs: VecDeque<RecvWr>,
    /// QPs that take their receives from it.
    pub qps: usize,
}

/// The attributes of a shared receive queue (`ibv_query_srq`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SrqAttr {
    /// Most receives it holds.
    pub max_wr: u32,
    /// The armed limit, 0 when not armed.
    pub limit: u32,
    /// Receives posted and not yet taken by a QP.
    pub posted: u32,
}

/// The shared receive queues of a NIC, by number.
pub(crate) type Srqs = BTreeMap<u32, Srq>;

impl Srq {
    /// An empty queue of `max_wr` receives in protection domain `pd`.
    pub fn new(pd: u32, max_wr: usize) -> Self {
        Srq {
            pd,
            max_wr,
            limit: 0,
            recvs: VecDeque::new(),
            qps: 0,
        }
    }

    /// Posts a receive (already checked against the MR table); `QueueFull`
    /// when it holds `max_wr`.
    pub fn post(&mut self, wr: RecvWr) -> Result<(), VerbsError> {
        if self.recvs.len() >= self.max_wr {
            return Err(VerbsError::QueueFull);
        }
        self.recvs.push_back(wr);
        Ok(())
    }

    /// Arms the limit (0 disarms); a limit above the size is refused.
    pub fn set_limit(&mut self, limit: u32) -> Result<(), VerbsError> {
        if limit as usize > self.max_wr {
            return Err(VerbsError::InvalidArgument);
        }
        self.limit = limit;
        Ok(())
    }

    /// Its attributes.
    pub fn attr(&self) -> SrqAttr {
        SrqAttr {
            max_wr: self.max_wr as u32,
            limit: self.limit,
            posted: self.recvs.len() as u32,
        }
    }

    /// Takes the oldest receive for a QP. When that leaves fewer receives than
    /// the armed limit, reports [`Event::SrqLimitReached`] once and disarms.
    pub fn take(&mut self, srqn: u32, events: &mut VecDeque<Event>) -> Option<RecvWr> {
        let wr = self.recvs.pop_front()?;
        if self.limit > 0 && self.recvs.len() < self.limit as usize {
            self.limit = 0;
            events.push_back(Event::SrqLimitReached { srqn });
        }
        Some(wr)
    }

    /// Puts back receives a destroyed QP took but never used, oldest first, at
    /// the front (they were taken from there).
    pub fn give_back(&mut self, wrs: impl DoubleEndedIterator<Item = RecvWr>) {
        for wr in wrs.rev() {
            self.recvs.push_front(wr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sge;

    fn recv(id: u64) -> RecvWr {
        RecvWr {
            wr_id: id,
            sgl: Sge::default().into(),
            stream: 0,
        }
    }

    #[test]
    fn the_limit_fires_once_when_a_take_leaves_fewer() {
        let mut srq = Srq::new(1, 4);
        for i in 0..4 {
            srq.post(recv(i)).unwrap();
        }
        assert_eq!(srq.post(recv(9)), Err(VerbsError::QueueFull));
        assert_eq!(srq.set_limit(5), Err(VerbsError::InvalidArgument));
        srq.set_limit(3).unwrap();
        let mut events = VecDeque::new();
        assert_eq!(srq.take(7, &mut events).map(|w| w.wr_id), Some(0));
        assert!(events.is_empty(), "3 left: not below the limit of 3");
        assert_eq!(srq.take(7, &mut events).map(|w| w.wr_id), Some(1));
        assert_eq!(events.pop_front(), Some(Event::SrqLimitReached { srqn: 7 }));
        assert_eq!(srq.take(7, &mut events).map(|w| w.wr_id), Some(2));
        assert!(events.is_empty(), "disarmed after firing");
        srq.give_back([recv(1), recv(2)].into_iter());
        let attr = srq.attr();
        assert_eq!((attr.max_wr, attr.limit, attr.posted), (4, 0, 3));
        assert_eq!(srq.take(7, &mut events).map(|w| w.wr_id), Some(1));
    }
}

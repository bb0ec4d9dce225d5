/*
 * The receipt protocol (docs/PROTOCOL.md): a publisher with a durable outbox, a lossy network and
 * a warehouse whose inbox records each shipment in the transaction of its effect, with retention.
 * README.md beside this file maps every process and step to the class and method that implements it.
 *
 * Bounds (defaults below, most a -D switch): 2 items; 1 network fault in all (a loss,
 * duplication or reordering); 1 proxy answer or other sender's shipment; 1 crash of each side;
 * no early timeout; 1 purge; clock epochs 0..1; 2 messages in flight per direction.
 *
 * Mutations (compile-time switches; each must produce a counterexample):
 *   ACK_BEFORE_COMMIT   the receiver answers before it commits
 *   ACCEPT_ANY_200      the publisher takes any 200 as an ACK, whatever its id and "accepted"
 *   PURGE_VOLATILE      the purge keeps its horizon in memory only
 *   MARK_BEFORE_VERIFY  the publisher writes the completion mark when a response arrives, and
 *                       takes it back if the response does not verify
 *   CONFLICT_OVERWRITES a conflict replaces the stored business (shows that property is not vacuous)
 */

#define N 2                 /* items; the publisher's choice below names them one by one */
#ifndef NETFAULTS
#define NETFAULTS 1         /* requests or responses the network loses, duplicates or reorders, in all */
#endif
#ifndef EARLY
#define EARLY 0             /* publisher timeouts while the answer is still on its way */
#endif
#ifndef PCRASHES
#define PCRASHES 1          /* publisher crashes */
#endif
#ifndef RCRASHES
#define RCRASHES 1          /* receiver crashes */
#endif
#ifndef PURGES
#define PURGES 1            /* purges */
#endif
#ifndef MAXT
#define MAXT 1              /* the clock's last epoch */
#endif
#ifndef QLEN
#define QLEN 2              /* messages in flight per direction */
#endif

#define QTY 1               /* every item's quantity; another sender's is 2 */
#define OTHER_QTY 2

/* Outbox states (ItemState). */
#define ABSENT  0
#define PENDING 1
#define DONE    2
#define PARKED  3

/* Responses: a verified ACK (200, this id, "accepted": true), a 200 that does not verify
 * (a proxy's, or "accepted":"true"), and the two definite refusals (409 conflict, 422 stale). */
mtype = { ACK, BOGUS_200, CONFLICT, STALE };

chan req = [QLEN] of { byte, byte, byte };   /* id, qty, origin */
chan rsp = [QLEN] of { byte, mtype };        /* id, verdict */

byte now;                    /* the clock's epoch */

/* Publisher, durable: the outbox. */
byte ostate[N];
byte origin[N];

/* Receiver, durable: inbox rows (qty, 0 = no row), their receive epoch, the horizon. */
byte stored[N];
byte received[N];
byte horizon;

/* Ghost state for the properties, never read by the processes. */
byte applied[N];             /* effects committed per id */
byte business[N];            /* the quantity of the committed effect, 0 = none */
bool purged[N];              /* the id's row was purged */

/* Fault budgets, and the crashes that are due: a process takes its crash before its next step. */
byte netfaults, early, pcrashes, rcrashes, purges;
bool purging;                /* a purge has committed its horizon and not yet deleted */
bool intruded;               /* the proxy has answered, or the other sender has sent, its one message */
bool pcrash, rcrash;

/* 1 + the item whose answer the publisher awaits, 0 = none: the exchange still open. The
 * receiver answers only on it, and the proxy answers on it. */
byte awaiting;

#define settled(i) (ostate[i] == DONE || ostate[i] == PARKED)
#define allSettled (settled(0) && settled(1))

/* The publisher's verdicts (Verdict): acked, rejected (parked), uncertain (resent). */
#define V_ACKED     1
#define V_REJECTED  2
#define V_UNCERTAIN 3
#define V_READ      4       /* MARK_BEFORE_VERIFY: a response read, not yet judged */

/* The completion mark; its invariant: the outbox never says done for an effect not committed. */
#define markDone(i) atomic { ostate[i] = DONE; assert(business[i] == QTY) }

/* The one step of Inbox.apply: claim, effect and commit together, or, stale, nothing. */
#define receive(id, q, o, k) \
    if \
    :: stored[id] == 0 && o < horizon -> k = STALE \
    :: stored[id] == 0 && o >= horizon -> \
        assert(!purged[id]); \
        stored[id] = q; received[id] = now; applied[id]++; business[id] = q; \
        assert(applied[id] == 1); \
        k = ACK \
    :: stored[id] != 0 && stored[id] == q -> k = ACK \
    :: stored[id] != 0 && stored[id] != q -> CONFLICT_WRITE(id, q); k = CONFLICT \
    fi; \
    assert(stored[id] == 0 || stored[id] == business[id])

#ifdef CONFLICT_OVERWRITES
#define CONFLICT_WRITE(id, q) stored[id] = q
#else
#define CONFLICT_WRITE(id, q) skip
#endif

#define ANSWER(id, q, k) \
    atomic { \
        if \
        :: q == QTY && awaiting == id + 1 && nfull(rsp) -> rsp!id, k \
        :: q != QTY || awaiting != id + 1 || full(rsp) -> skip \
        fi \
    }

/* A response the publisher accepts as the ACK of item i. */
#ifdef ACCEPT_ANY_200
#define verified(i, j, k) (k == ACK || k == BOGUS_200)
#else
#define verified(i, j, k) (j == i && k == ACK)
#endif

active proctype World() {
end:
    do
    /* Outbox.enqueueAll: each item once, in order, its origin the epoch it is first enqueued in. */
    :: atomic { ostate[0] == ABSENT -> ostate[0] = PENDING; origin[0] = now }
    :: atomic { ostate[0] != ABSENT && ostate[1] == ABSENT -> ostate[1] = PENDING; origin[1] = now }
    /* Time passes. */
    :: atomic { now < MAXT -> now++ }
    od
}

active proctype Publisher() {
    byte i, j;
    mtype k;
    byte v;                  /* this attempt's verdict, in memory only */
end:
    do
    :: allSettled -> break
    :: else ->
       {
        atomic {
            /* Outbox.pending: any item still pending (the window sends them side by side). */
            if
            :: ostate[0] == PENDING -> i = 0
            :: ostate[1] == PENDING -> i = 1
            fi;
            /* Each attempt is an exchange of its own: answers to abandoned attempts reach closed
             * connections, never this one. Requests of abandoned attempts still reach the receiver. */
            do
            :: nempty(rsp) -> rsp?j, k
            :: empty(rsp) -> break
            od;
            j = 0; k = 0;
            req!i, QTY, origin[i];
            awaiting = i + 1
        };
        /* Publisher.send: wait for this attempt's answer; AckVerifier.classify. */
        do
        :: atomic {
            rsp?j, k ->
#ifdef MARK_BEFORE_VERIFY
            v = V_READ
           };
           markDone(i);
           atomic {
#endif
            if
            :: verified(i, j, k) -> v = V_ACKED
            :: j == i && (k == CONFLICT || k == STALE) -> v = V_REJECTED
            :: else -> v = V_UNCERTAIN
            fi;
            j = 0; k = 0
           };
           break
        :: timeout -> v = V_UNCERTAIN; break               /* no answer in time */
        :: early < EARLY -> early++; v = V_UNCERTAIN; break /* gave up too soon: the answer comes later */
        od;
        /* Publisher.attempt: the outbox write for the verdict, then the next attempt. */
        atomic {
            if
#ifdef MARK_BEFORE_VERIFY
            :: v == V_ACKED -> skip
            :: v == V_REJECTED -> ostate[i] = PARKED
            :: v == V_UNCERTAIN -> ostate[i] = PENDING          /* takes the early mark back */
#else
            :: v == V_ACKED -> markDone(i)                      /* Outbox.markAcked */
            :: v == V_REJECTED -> ostate[i] = PARKED            /* Outbox.park, rejected */
            :: v == V_UNCERTAIN -> skip                         /* Outbox.recordUncertain: resent */
#endif
            fi;
            i = 0; v = 0; awaiting = 0
        }
       } unless {
        /* A crash at any step: the attempt in memory is gone, the outbox stays. */
        atomic { pcrash -> pcrash = false; i = 0; j = 0; k = 0; v = 0; awaiting = 0 }
       }
    od
}

active proctype Receiver() {
    byte id, q, o;
    mtype k;
end:
    do
    :: true ->
end_waiting:
       {
        req?id, q, o;
#ifdef ACK_BEFORE_COMMIT
        atomic {
            if
            :: stored[id] == 0 && o < horizon -> k = STALE
            :: stored[id] == 0 && o >= horizon -> k = ACK
            :: stored[id] != 0 && stored[id] == q -> k = ACK
            :: else -> k = CONFLICT
            fi
        };
        ANSWER(id, q, k);
        atomic { if :: k == ACK -> receive(id, q, o, k) :: else -> skip fi }
#else
        atomic { receive(id, q, o, k) };
        /* ReceiptsHandler.handle: answers after the commit, on the request's own connection; a
         * client gone takes no answer, and the other sender's answer goes to the other sender. */
        ANSWER(id, q, k);
#endif
        id = 0; q = 0; o = 0; k = 0
       } unless {
        /* A crash at any step: the request in hand and any open transaction are gone. */
        atomic {
            rcrash -> rcrash = false; id = 0; q = 0; o = 0; k = 0;
#ifdef PURGE_VOLATILE
            horizon = 0
#else
            skip
#endif
        }
       }
    :: atomic {
        /* InboxPurger.purge: raise the horizon to the cutoff and commit it, alone. */
        purges < PURGES && now > 0 && !purging -> purges++; purging = true;
        if :: horizon < now -> horizon = now :: else -> skip fi
       }
    :: atomic {
        /* Then, in a later transaction, raise it again and delete the rows received before it.
         * A purger that stops between the two leaves the horizon raised and the rows kept. */
        purging -> purging = false;
        if :: horizon < now -> horizon = now :: else -> skip fi;
        if :: stored[0] != 0 && received[0] < now -> stored[0] = 0; purged[0] = true :: else -> skip fi;
        if :: stored[1] != 0 && received[1] < now -> stored[1] = 0; purged[1] = true :: else -> skip fi
       }
    od
}

/* Crashes strike at any moment. The escape of an unless has priority over the statements it
 * guards, so the decision to crash is taken here, at any interleaving, and the process crashes
 * before its next step. The network's faults are taken here too. */
active proctype Faults() {
    byte a, b, c;
    mtype m;
end:
    do
    :: atomic { netfaults < NETFAULTS && nempty(req) -> netfaults++; req?a, b, c; a = 0; b = 0; c = 0; m = 0 }
    :: atomic { netfaults < NETFAULTS && nempty(rsp) -> netfaults++; rsp?a, m; a = 0; b = 0; c = 0; m = 0 }
    :: atomic { netfaults < NETFAULTS && nempty(req) && nfull(req) -> netfaults++; req?<a, b, c>; req!a, b, c; a = 0; b = 0; c = 0; m = 0 }
    :: atomic { netfaults < NETFAULTS && nempty(rsp) && nfull(rsp) -> netfaults++; rsp?<a, m>; rsp!a, m; a = 0; b = 0; c = 0; m = 0 }
    :: atomic { netfaults < NETFAULTS && len(req) > 1 -> netfaults++; req?a, b, c; req!a, b, c; a = 0; b = 0; c = 0; m = 0 }
    :: atomic { netfaults < NETFAULTS && len(rsp) > 1 -> netfaults++; rsp?a, m; rsp!a, m; a = 0; b = 0; c = 0; m = 0 }
    /* A proxy that answers a request itself, without forwarding it: a 200 that does not verify,
     * or a valid-looking ACK that names another id. */
    :: atomic { !intruded && awaiting != 0 && req?[eval(awaiting - 1), QTY, origin[awaiting - 1]] && nfull(rsp) ->
        intruded = true; req??eval(awaiting - 1), QTY, origin[awaiting - 1]; a = awaiting - 1;
        if :: rsp!a, BOGUS_200 :: rsp!(1 - a), ACK fi; a = 0; b = 0; c = 0; m = 0 }
    :: atomic { pcrashes < PCRASHES && !pcrash -> pcrashes++; pcrash = true }
    :: atomic { rcrashes < RCRASHES && !rcrash -> rcrashes++; rcrash = true }
    /* Another sender sends item 0's business, same id and origin, with another quantity. */
    :: atomic { !intruded && ostate[0] != ABSENT && nfull(req) -> intruded = true; req!0, OTHER_QTY, origin[0] }
    od
}

/* Every enqueued item is eventually marked done or parked with its reason. */
ltl settles { <> allSettled }

/*
 * Order Guard, the queue path, as a SPIN model (model/README is in the project README,
 * "Proof of the protocol").
 *
 * One business key (order ids are independent: each id has its own item and its own
 * messages). N messages for it sit in a standard queue: two identical copies of an order
 * and one conflicting copy (same id, another quantity). C consumers receive, write and
 * delete concurrently; any of them may crash at any step, the DynamoDB call may fail
 * transiently, a conditional-check failure may come back without its Item, a response may
 * be lost after DynamoDB committed, and any message in flight may become visible again
 * at any moment (its visibility timeout ran out while a consumer was still working, a
 * fault) or after its consumer crashed (always, in time).
 * SQS moves a message to the dead-letter queue when it is received again after MAXRECV
 * receives (maxReceiveCount, from template.yaml). Faults are bounded (MAXFAULTS), so
 * under weak fairness every message can leave the queue.
 *
 * Mutants (compile with -D<NAME>) each break one rule of store.py / queue_worker.py:
 *   NO_CONDITION               PutItem without attribute_not_exists(id)
 *   ACK_BEFORE_WRITE           delete the message before the conditional write
 *   MISSING_ITEM_IS_DUPLICATE  a condition failure without Item taken as a duplicate
 *   DELETE_ON_ERROR            delete the message whatever the decision
 */

#ifndef MAXRECV
#define MAXRECV 5
#endif
#ifndef MAXFAULTS
#define MAXFAULTS 2
#endif
#define N 3
#define C 2

#define VISIBLE  0
#define INFLIGHT 1
#define DELETED  2
#define DLQ      3

#define ACCEPTED  1
#define DUPLICATE 2
#define CONFLICT  3
#define ERROR     4

byte state[N];        /* VISIBLE at start: the producer sent all three */
byte recv[N];         /* ApproximateReceiveCount */
byte gen[N];          /* receipt handle generation: a delete needs the newest */
byte q[N];            /* quantity: q[0] = q[1] = 1 (identical copies), q[2] = 2 */
bool touched[N];      /* a fault, a crash or a visibility expiry hit one of its receives */
bool orphan[N];       /* in flight, but its consumer crashed: only the timeout frees it */
byte stored = 0;      /* the item's quantity, 0: no item */
byte first = 0;       /* ghost: the quantity of the first accepted write */
byte writes = 0;      /* accepted conditional writes */
byte faults = 0;      /* faults and crashes injected so far */

#define all_done (state[0] >= DELETED && state[1] >= DELETED && state[2] >= DELETED)

ltl every_message_leaves_the_queue { <> all_done }

inline fault_possible() { faults < MAXFAULTS }

/* DeleteMessage with the receipt of receive g: takes effect only if it is the newest. */
inline delete(m, g, d) {
  atomic {
    if
    :: state[m] == INFLIGHT && gen[m] == g ->
         /* a conflicting copy is never acknowledged; nothing is deleted undecided */
         assert(d == ACCEPTED || d == DUPLICATE);
         assert(stored == q[m]);
         state[m] = DELETED
    :: else -> touched[m] = true  /* stale receipt: received again meanwhile */
    fi
  }
}

proctype consumer() {
  byte m, g, d;
  do
  :: all_done -> break
  :: atomic {
       /* ReceiveMessage: any visible message; a message received MAXRECV times
          already is moved to the dead-letter queue instead (the redrive policy) */
       if
       :: state[0] == VISIBLE -> m = 0
       :: state[1] == VISIBLE -> m = 1
       :: state[2] == VISIBLE -> m = 2
       fi;
       if
       :: recv[m] >= MAXRECV ->
            state[m] = DLQ;
            /* an identical copy reaches the DLQ only if faults kept failing it */
            assert(q[m] != stored || touched[m]);
            m = 255
       :: else ->
            recv[m]++; gen[m]++; g = gen[m]; state[m] = INFLIGHT; orphan[m] = false
       fi
     }
     if
     :: m == 255 -> skip
     :: else ->
#ifdef ACK_BEFORE_WRITE
        state[m] = DELETED;                    /* acknowledged before any decision */
        assert(stored == q[m]);                /* …so it may be a conflicting copy */
#endif
        if
        :: fault_possible() -> faults++; touched[m] = true; orphan[m] = true; goto next  /* crash before the write */
        :: skip
        fi;
        /* the conditional PutItem, atomic at DynamoDB, and its decision */
        atomic {
          if
          :: fault_possible() -> faults++; d = ERROR; touched[m] = true  /* throttled, 5xx */
          :: else ->
#ifdef NO_CONDITION
               stored = q[m]; writes++; d = ACCEPTED;
               if :: first == 0 -> first = q[m] :: else -> skip fi
#else
               if
               :: stored == 0 -> stored = q[m]; first = q[m]; writes++; d = ACCEPTED
               :: stored != 0 ->
                    if
                    :: fault_possible() -> faults++; touched[m] = true;  /* no Item came back */
#ifdef MISSING_ITEM_IS_DUPLICATE
                         d = DUPLICATE
#else
                         d = ERROR
#endif
                    :: true ->
                         if
                         :: stored == q[m] -> d = DUPLICATE
                         :: else -> d = CONFLICT
                         fi;
                         assert(d != CONFLICT || stored != q[m])  /* a copy is no conflict */
                    fi
               fi
#endif
          fi;
          assert(writes <= 1);                     /* at most one accepted write */
          assert(first == 0 || stored == first)    /* the first order stands */
        }
        if
        :: fault_possible() -> faults++; touched[m] = true; orphan[m] = true; goto next  /* crash after the write */
        :: skip
        fi;
#ifdef DELETE_ON_ERROR
        atomic { if :: state[m] == INFLIGHT && gen[m] == g -> assert(stored == q[m]);
                        state[m] = DELETED :: else -> skip fi }
#else
        if
        :: d == ACCEPTED || d == DUPLICATE ->
             if
             :: fault_possible() -> faults++; touched[m] = true; orphan[m] = true; goto next  /* before delete */
             :: skip
             fi;
             delete(m, g, d)
        :: else -> skip  /* listed as a batch item failure: visible again later */
        fi
#endif
     fi;
next: d_step { m = 0; g = 0; d = 0 }  /* forget the last job: no stale local state */
  od
}

/* A visibility timeout runs out: always, in time, for a message whose consumer crashed;
   and, as a fault, while a slow consumer is still working on it. */
#define expire(i) atomic { state[i] == INFLIGHT && (orphan[i] || faults < MAXFAULTS) -> \
                           if :: !orphan[i] -> faults++ :: else -> skip fi; \
                           state[i] = VISIBLE; touched[i] = true; orphan[i] = false }
proctype visibility() {
  do
  :: all_done -> break
  :: expire(0)
  :: expire(1)
  :: expire(2)
  od
}

init {
  atomic {
    q[0] = 1; q[1] = 1; q[2] = 2;
    run consumer(); run consumer(); run visibility()
  }
}

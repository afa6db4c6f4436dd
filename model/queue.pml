/*
 * Order Guard, the queue path, as a SPIN model (docs/proofs.md).
 *
 * One business key: order ids are independent (each id has its own item and its own
 * messages), so one id with three messages covers them: two identical copies of an order
 * (quantity 1) and a conflicting copy (quantity 2), in a standard queue. Two consumers
 * receive, write and delete concurrently. Anything may go wrong, within MAXFAULTS faults
 * per run: a consumer crashes before the write or after it (before the delete); the
 * DynamoDB call fails transiently; a condition failure comes back without its Item; a
 * visibility timeout runs out while a slow consumer still works on the message. A message
 * whose consumer crashed, or which was listed as a batch item failure, becomes visible
 * again when its visibility timeout runs out (always, in time). SQS moves a message to
 * the dead-letter queue when it would be received again after MAXRECV receives
 * (maxReceiveCount, read from template.yaml by model/check.py). A DeleteMessage with an
 * old receipt handle (the message was received again meanwhile) deletes nothing.
 *
 * Mutants (compile with -D<NAME>) each break one rule of store.py / decision.py / queue_worker.py:
 *   NO_CONDITION               PutItem without attribute_not_exists(id)
 *   ACK_BEFORE_WRITE           delete the message before the conditional write
 *   MISSING_ITEM_IS_DUPLICATE  a condition failure without Item taken as a duplicate
 *   DELETE_ON_ERROR            delete the message whatever the decision
 *   LISTED_STAYS_HIDDEN        a listed or abandoned message never becomes visible again
 *                              (no visibility timeout: the liveness property must fail)
 */

#ifndef MAXRECV
#define MAXRECV 5
#endif
#ifndef MAXFAULTS
#define MAXFAULTS 2
#endif

#define VISIBLE  0
#define INFLIGHT 1   /* a consumer works on it */
#define WAITING  2   /* in flight, nobody works on it: visible when the timeout runs out */
#define DELETED  3
#define DLQ      4

#define ACCEPTED  1
#define DUPLICATE 2
#define CONFLICT  3
#define ERROR     4

byte state[3];        /* VISIBLE at start: the producer sent all three */
byte recv[3];         /* ApproximateReceiveCount; also the newest receipt handle */
byte q[3];            /* quantity: q[0] = q[1] = 1 (identical copies), q[2] = 2 */
bool touched[3];      /* a fault hit one of its receives */
byte stored = 0;      /* the item's quantity, 0: no item */
byte first = 0;       /* ghost: the quantity of the first accepted write */
byte writes = 0;      /* accepted writes */
byte faults = 0;      /* faults injected so far */

#define all_done (state[0] >= DELETED && state[1] >= DELETED && state[2] >= DELETED)

ltl every_message_leaves_the_queue { <> all_done }

#define fault (faults < MAXFAULTS)

proctype consumer() {
  byte m, h, d;
  bool got;             /* received a message (not moved to the DLQ) */
  do
  :: all_done -> break
  :: atomic {
       /* ReceiveMessage: a visible message, or the redrive policy moves it to the DLQ */
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
            got = false
       :: else -> recv[m]++; h = recv[m]; state[m] = INFLIGHT; got = true
       fi
     }
     if
     :: !got -> skip
     :: else ->
#ifdef ACK_BEFORE_WRITE
        atomic { assert(stored == q[m]); state[m] = DELETED };  /* acknowledged undecided */
#endif
        atomic {
          if
          :: fault -> faults++; touched[m] = true;     /* crash before the write */
               if :: state[m] == INFLIGHT && recv[m] == h -> state[m] = WAITING :: else fi;
               d = 0
          :: fault -> faults++; touched[m] = true; d = ERROR  /* throttled, 5xx, timeout */
          :: true ->
               /* the conditional PutItem, atomic at DynamoDB, and the write decision */
#ifdef NO_CONDITION
               stored = q[m]; writes++; d = ACCEPTED;
               if :: first == 0 -> first = q[m] :: else fi
#else
               if
               :: stored == 0 -> stored = q[m]; first = q[m]; writes++; d = ACCEPTED
               :: stored != 0 && fault -> faults++; touched[m] = true;  /* no Item */
#ifdef MISSING_ITEM_IS_DUPLICATE
                    d = DUPLICATE
#else
                    d = ERROR
#endif
               :: stored != 0 && stored == q[m] -> d = DUPLICATE
               :: stored != 0 && stored != q[m] -> d = CONFLICT
               fi
#endif
          fi;
          assert(writes <= 1);                       /* at most one accepted write */
          assert(first == 0 || stored == first)      /* the first order stands */
        }
        if
        :: d == 0 -> skip
        :: else ->
           atomic {
#ifdef DELETE_ON_ERROR
             if :: true
#else
             if
             :: d == ACCEPTED || d == DUPLICATE
#endif
                -> if
                   :: fault -> faults++; touched[m] = true;  /* crash before the delete */
                        if :: state[m] == INFLIGHT && recv[m] == h -> state[m] = WAITING
                           :: else fi
                   :: true ->
                        if
                        :: state[m] == INFLIGHT && recv[m] == h ->
                             /* acknowledged: only after a write decision, never a
                                conflicting copy */
                             assert(stored == q[m]);
                             state[m] = DELETED
                        :: else -> touched[m] = true   /* an old receipt: nothing deleted */
                        fi
                   fi
             :: else ->  /* listed as a batch item failure */
                  if :: state[m] == INFLIGHT && recv[m] == h -> state[m] = WAITING :: else fi
             fi
           }
        fi
     fi;
     d_step { m = 0; h = 0; d = 0; got = false }   /* forget the last job */
  od
}

/* The visibility timeout runs out: always, in time, for a message nobody works on; as a
   fault, while a slow consumer still works on it. */
#ifdef LISTED_STAYS_HIDDEN
#define freed(i) false
#else
#define freed(i) (state[i] == WAITING)
#endif
#define expire(i) atomic { (freed(i) || (state[i] == INFLIGHT && fault)) -> \
                           if :: state[i] == INFLIGHT -> faults++; touched[i] = true \
                              :: else fi; \
                           state[i] = VISIBLE }
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

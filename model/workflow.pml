/*
 * Order Guard, the workflow path, as a SPIN model (docs/proofs.md).
 *
 * Three executions of OrdersStateMachine for one order id run at once: the order
 * (quantity 1), a re-execution of the same order (quantity 1) and a conflicting order
 * (quantity 2). Each runs StoreOrder: an attempt may fail transiently before its write
 * (TransientStoreError: throttling, a dropped connection, 5xx) or after it
 * (TransientOrderError: the after-write mode, an error once DynamoDB committed), and the
 * matching retrier runs it again. As in Step Functions, each retrier counts its own
 * retries: STORE_RETRIES and AFTER_RETRIES are the two retriers' MaxAttempts, read from
 * statemachine/orders.asl.json by model/check.py. A condition failure may come back
 * without its Item (UnreadableStoredOrder: no retrier matches, the execution fails under
 * that name). Duplicate or accepted: the task succeeds. A
 * conflict is caught: the execution ends in ConflictingOrder. Faults are bounded by
 * MAXFAULTS per run.
 *
 * Mutants (-D<NAME>):
 *   NO_CONDITION               PutItem without attribute_not_exists(id)
 *   MISSING_ITEM_IS_DUPLICATE  a condition failure without Item taken as a duplicate
 *   RETRY_CONFLICT             OrderConflict retried like a transient error, and the
 *                              retry taken as success (a "retry until it works" loop)
 */

#ifndef STORE_RETRIES
#define STORE_RETRIES 4
#endif
#ifndef AFTER_RETRIES
#define AFTER_RETRIES 2
#endif
#ifndef MAXFAULTS
#define MAXFAULTS 3
#endif

#define RUNNING   0
#define SUCCEEDED 1
#define CONFLICTED 2
#define FAILED    3

byte q[3];            /* the executions' quantities */
byte status[3];
bool touched[3];      /* a fault hit one of its attempts */
byte stored = 0, first = 0, writes = 0, faults = 0;

#define all_done (status[0] != RUNNING && status[1] != RUNNING && status[2] != RUNNING)
#define fault (faults < MAXFAULTS)

ltl every_execution_ends { <> all_done }

proctype execution(byte e) {
  byte store_retries = 0, after_retries = 0;
  do
  :: store_retries > STORE_RETRIES || after_retries > AFTER_RETRIES ->
       status[e] = FAILED; break                   /* a retrier ran out: States.* fails */
  :: else ->
     atomic {
       if
       :: fault -> faults++; touched[e] = true;    /* transient, before the write */
            store_retries++
       :: true ->
#ifdef NO_CONDITION
            stored = q[e]; writes++; if :: first == 0 -> first = q[e] :: else fi;
            assert(writes <= 1);
            status[e] = SUCCEEDED
#else
            if
            :: stored == 0 -> stored = q[e]; first = q[e]; writes++; status[e] = SUCCEEDED
            :: stored != 0 && fault -> faults++; touched[e] = true;   /* no Item */
#ifdef MISSING_ITEM_IS_DUPLICATE
                 status[e] = SUCCEEDED
#else
                 status[e] = FAILED
#endif
            :: stored != 0 && stored == q[e] -> status[e] = SUCCEEDED   /* duplicate */
            :: stored != 0 && stored != q[e] ->
#ifdef RETRY_CONFLICT
                 faults++; status[e] = SUCCEEDED
#else
                 status[e] = CONFLICTED                                 /* caught */
#endif
            fi;
            /* a fault after the write: the attempt fails, the retrier runs it again */
            if
            :: status[e] == SUCCEEDED && fault -> faults++; touched[e] = true;
                 after_retries++; status[e] = RUNNING
            :: else
            fi
#endif
       fi;
       assert(writes <= 1);                       /* at most one accepted write */
       assert(first == 0 || stored == first);     /* the first order stands */
       /* an execution succeeds only for the stored order; an identical one never
          ends in a conflict, and fails only if faults kept failing it */
       assert(status[e] != SUCCEEDED || stored == q[e]);
       assert(status[e] != CONFLICTED || stored != q[e]);
       assert(status[e] != FAILED || stored != q[e] || touched[e])
     }
     if :: status[e] != RUNNING -> break :: else fi
  od
}

init {
  atomic {
    q[0] = 1; q[1] = 1; q[2] = 2;
    run execution(0); run execution(1); run execution(2)
  }
}

/* The expert's rollouts and exact solver in C: the same values as search.py's Python, faster.
 *
 * Scope: the play phase of every rule set (melds and claims included); the caller (native.py)
 * keeps rollouts with random moves or smoothed values in Python.
 * Invariant: for every state in scope, qs_values returns bit for bit the values of
 * Evaluator.value (policy.py's three policies, state.py's card play, ending.py's deal end,
 * outlook.py's table); tests/engine/test_native.py compares them on random positions.
 *
 * Cards are 0..31 (suit * 8 + rank, the strongest rank first), hands 32-bit masks, as in
 * engine/cards.py. Python's max()/min() keep the first of equal keys; so do the loops here,
 * walking cards in index order.
 */
#include <stdint.h>
#include <string.h>

#define POLITAINE_FLAG 32
#define CLAIM 256
#define LAST_TRICK_THIRDS 3
#define POLITAINE_POINTS 11

enum { MODE_OFF = 0, MODE_FIRST_CARD = 1, MODE_BEFORE_PLAY = 2 };
enum { LOW_OFF = 0, LOW_EVERY = 1, LOW_FIRST = 2 };
enum { POLICY_GREEDY = 0, POLICY_CAREFUL = 1, POLICY_SHREWD = 2 };
enum { CLAIM_OFF = 0, CLAIM_ON_LEAD = 1, CLAIM_ANY_TURN = 2 };
enum { RACE_CLAIMS = 1, RACE_MELDS = 2, RACE_LEAD = 4, RACE_FIRST = 8 };

/* The deal in progress: what the engine's State and Table hold that a rollout reads. */
typedef struct {
    uint32_t hand[4];
    int to_move, leader, ntrick, trick[4], done; /* done: tricks finished this deal */
    int taken[2], won[2], low;
    int run_seat, run_suit, run_count; /* run_seat -1: no politaine run under way */
    int nann, ann_seat[4], ann_card[4]; /* politaine announcements of the trick in progress */
    int poules[4], bonus[2], melds[2], score[2];
    int melded;  /* meld ids scored this deal (engine/actions.py) */
    int claimed; /* -1, or the team that won the match by a claim */
    /* What every seat knows of each hand (read only by imagine): cards said to be held (melds,
     * politaines, signals; a card leaves with its play) and cards said not to be (the missing
     * card of a three, ranks under a low lead; the public voids are apart). */
    uint32_t shown[4], barred[4];
} Deal;

/* What stays fixed over a decision: the rules, the searching team, the outlook table. */
typedef struct {
    int mode, low_rule, capot, eighteen_four, target, max_deals, deal, next_instant;
    int team, exact_cards, policy;
    int patience; /* shrewd: a leader holding this many cards keeps its masters (0: never) */
    int race; /* shrewd: RACE_* bits (race_cards, must_hold_lead) */
    int meld_rule, claim_rule;
    int own_samples, own_plies; /* the seats' own searches in rollouts (own_choice) */
    int own_team;                /* 1: only the searching team's seats search their moves */
    int own_leads;               /* 1: only leads are searched (followers play the policy) */
    int own_lead_plies;          /* leads in the first this many moves are searched as well */
    uint64_t rng;
    const double *outlook;
    int limit; /* the table is (limit + 1) x (limit + 1) */
} Ctx;

static const int THIRDS[8] = {1, 1, 3, 1, 1, 1, 0, 0};
#define CARD_THIRDS(c) (THIRDS[(c) & 7])
#define SUIT_MASK(s) (0xFFu << (8 * (s)))
#define TNA_MASK(s) (0x7u << (8 * (s)))
#define TNA_ALL 0x07070707u
#define SUIT_LOW_BITS 0x01010101u

/* The stronger cards of c's suit. */
static inline uint32_t stronger(int c) {
    return (uint32_t)(((1u << c) - 1u) & ~((1u << (c & ~7)) - 1u));
}

static inline int popcount(uint32_t x) { return __builtin_popcount(x); }

static uint32_t lowest_rank(uint32_t hand) {
    for (int rank = 7; rank >= 0; rank--) {
        uint32_t cards = hand & (0x01010101u << rank);
        if (cards) return cards;
    }
    return 0;
}

static uint32_t announceable(uint32_t hand) {
    uint32_t tna = hand & TNA_ALL;
    if (!(tna & (tna >> 1) & (tna >> 2) & SUIT_LOW_BITS)) return 0;
    uint32_t out = 0;
    for (int s = 0; s < 4; s++)
        if ((tna & TNA_MASK(s)) == TNA_MASK(s)) out |= TNA_MASK(s);
    return out;
}

/* The cards out in the other hands, as the seat to move sees them. */
static inline uint32_t others_of(const Deal *d) {
    return (d->hand[0] | d->hand[1] | d->hand[2] | d->hand[3]) & ~d->hand[d->to_move];
}

/* The cards the seat to move may announce a politaine with now: where the first-card politaine
 * counts and no run of its own is under way (policy.play_action and solver_moves). */
static uint32_t announce_mask(const Deal *d, int mode) {
    if (mode != MODE_FIRST_CARD || (d->run_seat >= 0 && d->run_seat == d->to_move)) return 0;
    return announceable(d->hand[d->to_move]);
}

/* The cards the seat to move may play (follow suit, else anything; the low lead when bound). */
static uint32_t playable(const Deal *d) {
    uint32_t hand = d->hand[d->to_move];
    if (d->ntrick) {
        uint32_t follow = hand & SUIT_MASK(d->trick[0] >> 3);
        return follow ? follow : hand;
    }
    return d->low ? lowest_rank(hand) : hand;
}

/* -- the policies (policy.py) ------------------------------------------------------------------ */

/* The first of A, T, 9 of ``suit`` among ``cards`` (a run is played from the top); -1 if none. */
static int run_card(uint32_t cards, int suit) {
    int base = suit << 3;
    int order[3] = {base + 2, base, base + 1};
    for (int i = 0; i < 3; i++)
        if (cards >> order[i] & 1) return order[i];
    return -1;
}

static int politaine_card(uint32_t hand, uint32_t cards, const Deal *d, int go_on) {
    if (go_on && d->run_seat >= 0 && d->run_seat == d->to_move) {
        int card = run_card(cards, d->run_suit);
        if (card >= 0) return card;
    }
    uint32_t tna = hand & TNA_ALL;
    if (!(tna & (tna >> 1) & (tna >> 2) & SUIT_LOW_BITS)) return -1;
    for (int s = 0; s < 4; s++) {
        if ((hand & TNA_MASK(s)) == TNA_MASK(s)) {
            int card = run_card(cards, s);
            if (card >= 0) return card;
        }
    }
    return -1;
}

/* min over cards of (thirds, -rank index): the first such card. */
static int cheapest(uint32_t cards) {
    int best = -1, bk = 1 << 30;
    for (uint32_t m = cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        int k = CARD_THIRDS(c) * 16 - (c & 7);
        if (k < bk) { bk = k; best = c; }
    }
    return best;
}

/* max over cards of (thirds, -(c & 7), -c): the first such card. */
static int feed(uint32_t cards) {
    int best = -1, bk = -(1 << 30);
    for (uint32_t m = cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        int k = CARD_THIRDS(c) * 4096 - (c & 7) * 64 - c;
        if (k > bk) { bk = k; best = c; }
    }
    return best;
}

static inline int highest_code(uint32_t cards) { return 31 - __builtin_clz(cards); }

/* The cards of ``cards`` that no card of ``threat`` beats (masters against the cards out, or
 * sure winners against the cards the opponent still to play may hold). */
static uint32_t unbeaten(uint32_t cards, uint32_t threat) {
    uint32_t out = 0;
    for (uint32_t m = cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        if (!(stronger(c) & threat)) out |= 1u << c;
    }
    return out;
}

static int spare(uint32_t cards, uint32_t hand, uint32_t others) {
    int best = -1, bk = 1 << 30;
    for (uint32_t m = cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        int k = (CARD_THIRDS(c) << 8) | ((7 - (c & 7)) << 4) | ((stronger(c) & others) ? 0 : 128)
                | (8 - popcount(hand & SUIT_MASK(c >> 3)));
        if (k < bk) { bk = k; best = c; }
    }
    return best;
}

typedef struct { int low, best, partner_wins, thirds; } SoFar;

static SoFar so_far(const Deal *d) {
    SoFar f;
    f.low = (d->trick[0] >> 3) << 3;
    f.best = d->trick[0];
    int pos = 0;
    f.thirds = CARD_THIRDS(d->trick[0]);
    for (int i = 1; i < d->ntrick; i++) {
        int c = d->trick[i];
        f.thirds += CARD_THIRDS(c);
        if (f.low <= c && c < f.best) { f.best = c; pos = i; }
    }
    f.partner_wins = ((d->ntrick - pos) & 1) == 0;
    return f;
}

static uint32_t beating_of(uint32_t cards, SoFar f) {
    /* low <= c < best */
    uint32_t below_best = (uint32_t)((1ull << f.best) - 1ull);
    uint32_t from_low = ~(uint32_t)((1ull << f.low) - 1ull);
    return cards & below_best & from_low;
}

/* Of ``cards``, those of the suits both opponents of ``seat`` lack and its partner may hold. */
static uint32_t free_lead(uint32_t cards, const uint32_t *voids, int seat) {
    return cards & voids[(seat + 1) & 3] & voids[(seat + 3) & 3] & ~voids[(seat + 2) & 3];
}

static int lead_run_or_master(const Deal *d, uint32_t hand, uint32_t others, uint32_t cards,
                              int runs) {
    if (runs) {
        int run = politaine_card(hand, cards, d, 0);
        if (run >= 0) return run;
    }
    int best = -1, bk = -(1 << 30);
    for (uint32_t m = unbeaten(cards, others); m; m &= m - 1) {
        int c = __builtin_ctz(m);
        int k = CARD_THIRDS(c) * 64 - c;
        if (k > bk) { bk = k; best = c; }
    }
    return best;
}

static int greedy(const Deal *d, const Ctx *x, uint32_t cards, uint32_t hand, uint32_t others) {
    int runs = x->mode != MODE_OFF;
    if (!d->ntrick) {
        int lead = lead_run_or_master(d, hand, others, cards, runs);
        return lead >= 0 ? lead : cheapest(cards);
    }
    SoFar f = so_far(d);
    int last = d->ntrick == 3;
    if (f.partner_wins && (last || !(stronger(f.best) & others))) return feed(cards);
    uint32_t beating = beating_of(cards, f);
    if (beating) {
        if (runs) {
            int run = politaine_card(hand, beating, d, 0);
            if (run >= 0) return run;
        }
        if (last || f.thirds >= 3) return highest_code(beating);
        int best = -1, bk = 1 << 30;
        for (uint32_t m = unbeaten(beating, others); m; m &= m - 1) {
            int c = __builtin_ctz(m);
            if (CARD_THIRDS(c) < bk) { bk = CARD_THIRDS(c); best = c; }
        }
        if (best >= 0) return best;
    }
    return cheapest(cards);
}

static int careful(const Deal *d, const Ctx *x, const uint32_t *voids, uint32_t cards,
                   uint32_t hand, uint32_t others) {
    int seat = d->to_move;
    int runs = x->mode != MODE_OFF;
    int left = (seat + 1) & 3;
    if (!d->ntrick) {
        int lead = lead_run_or_master(d, hand, others, cards, runs);
        if (lead >= 0) return lead;
        uint32_t free_ = free_lead(cards, voids, seat);
        return cheapest(free_ ? free_ : cards);
    }
    SoFar f = so_far(d);
    int last = d->ntrick == 3;
    uint32_t threat = last ? 0 : others & ~voids[left];
    if (f.partner_wins && (last || !(stronger(f.best) & threat))) return feed(cards);
    uint32_t beating = beating_of(cards, f);
    if (beating) {
        if (runs) {
            int run = politaine_card(hand, beating, d, 0);
            if (run >= 0) return run;
        }
        if (last) return highest_code(beating);
        uint32_t sure = unbeaten(beating, threat);
        if (sure) return highest_code(sure);
        if (f.thirds >= 3) return highest_code(beating);
    }
    return cheapest(cards);
}

static int available_melds(uint32_t hand, int melded, int *found);

/* claim.count: what a claim by ``team`` would count now. */
static inline int team_count(const Deal *d, int team) {
    return d->score[team] + d->taken[team] / 3 + d->melds[team];
}

/* The cards of meld id m (engine/actions.py) as ``hand``, which may meld it, holds them. */
static inline uint32_t cards_of_meld(int m, uint32_t hand) {
    if (m < 4) return TNA_MASK(m);
    if (m < 7) return 0x01010101u << (m - 4);
    return hand & (0x01010101u << ((m - 7) / 4));
}

/* The cards of every meld ``hand`` could meld now (melds.available_melds). */
static uint32_t meld_cards(uint32_t hand, int melded) {
    int found[8];
    int n = available_melds(hand, melded, found);
    uint32_t cards = 0;
    for (int i = 0; i < n; i++) cards |= cards_of_meld(found[i], hand);
    return cards;
}

/* Of the ``beating`` cards of a follower, those worth contesting this trick with whatever it
 * is worth (0: no such reason): winning it gives its team the lead with a count that claims
 * the match, keeps the lead from opponents who would claim on it, or, where its team has won
 * no trick yet, lets it meld or (RACE_FIRST, against an opponent's card) lets its partner
 * meld (then only cards outside its melds). */
static uint32_t race_cards(const Deal *d, const Ctx *x, uint32_t hand, uint32_t beating,
                           SoFar f) {
    int team = d->to_move & 1, them = 1 - team;
    if ((x->race & RACE_CLAIMS) && x->claim_rule == CLAIM_ON_LEAD && d->done < 7) {
        int ours = d->score[team] + (d->taken[team] + f.thirds + CARD_THIRDS(__builtin_ctz(beating))) / 3
                   + d->melds[team];
        int theirs = d->score[them] + (d->taken[them] + f.thirds) / 3 + d->melds[them];
        if (ours >= x->target || theirs >= x->target) return beating;
    }
    if ((x->race & (RACE_MELDS | RACE_FIRST)) && x->meld_rule && !d->won[team]) {
        uint32_t melding = popcount(hand & TNA_ALL) >= 3 ? meld_cards(hand, d->melded) : 0;
        uint32_t outside = beating & ~melding;
        if ((x->race & RACE_MELDS) && melding) return outside;
        if ((x->race & RACE_FIRST) && !f.partner_wins && outside) return outside;
    }
    return 0;
}

/* A leader whose opponents would claim on the next lead (their count reaches the target) and
 * whose deal goes on after this trick: it must keep the lead. */
static int must_hold_lead(const Deal *d, const Ctx *x) {
    return x->claim_rule == CLAIM_ON_LEAD && d->done < 7
           && team_count(d, 1 - (d->to_move & 1)) >= x->target;
}

/* The lead with the fewest stronger cards of its suit in ``threat``, then the strongest. */
static int likeliest_winner(uint32_t cards, uint32_t threat) {
    int best = -1, bk = 1 << 30;
    for (uint32_t m = cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        int k = popcount(stronger(c) & threat) * 64 + c;
        if (k < bk) { bk = k; best = c; }
    }
    return best;
}

static int shrewd(const Deal *d, const Ctx *x, const uint32_t *voids, uint32_t cards,
                  uint32_t hand, uint32_t others) {
    int seat = d->to_move;
    int runs = x->mode != MODE_OFF;
    int left = (seat + 1) & 3, right = (seat + 3) & 3;
    if (!d->ntrick) {
        if (runs) {
            int run = politaine_card(hand, cards, d, 1);
            if (run >= 0) return run;
        }
        uint32_t masters = unbeaten(cards, others);
        if (masters && x->patience && popcount(hand) >= x->patience) {
            /* keep the masters; lead from a suit whose master is out, where there is one */
            uint32_t held = 0;
            for (uint32_t m = masters; m; m &= m - 1) held |= SUIT_MASK(__builtin_ctz(m) >> 3);
            if (cards & ~held) cards &= ~held;
            masters = 0;
        }
        if (!masters && (x->race & RACE_LEAD) && must_hold_lead(d, x))
            return likeliest_winner(cards, others & ~(voids[left] & voids[right]));
        if (masters) {
            uint32_t open_left = others & ~voids[left], open_right = others & ~voids[right];
            int best = -1, bk = -(1 << 30);
            for (uint32_t m = masters; m; m &= m - 1) {
                int c = __builtin_ctz(m);
                uint32_t suit = SUIT_MASK(c >> 3);
                int drawn = ((open_left & suit) != 0) + ((open_right & suit) != 0);
                int k = CARD_THIRDS(c) * 4096 + drawn * 64 - c;
                if (k > bk) { bk = k; best = c; }
            }
            return best;
        }
        uint32_t free_ = free_lead(cards, voids, seat);
        return spare(free_ ? free_ : cards, hand, others);
    }
    SoFar f = so_far(d);
    int last = d->ntrick == 3;
    uint32_t threat = last ? 0 : others & ~voids[left];
    if (f.partner_wins && !(stronger(f.best) & threat)) {
        int best = -1, bk = -(1 << 30);
        for (uint32_t m = cards; m; m &= m - 1) {
            int c = __builtin_ctz(m);
            int k = CARD_THIRDS(c) * 64 + ((stronger(c) & others) ? 16 : 0) + (c & 7);
            if (k > bk) { bk = k; best = c; }
        }
        return best;
    }
    uint32_t beating = beating_of(cards, f);
    if (beating) {
        if (runs) {
            int run = politaine_card(hand, beating, d, 0);
            if (run >= 0) return run;
        }
        if (x->race) {
            uint32_t wanted = race_cards(d, x, hand, beating, f);
            if (wanted) {
                uint32_t sure = unbeaten(wanted, threat);
                return sure ? highest_code(sure) : __builtin_ctz(wanted); /* else the strongest */
            }
        }
        uint32_t sure = unbeaten(beating, threat);
        if (sure) return highest_code(sure);
        if (!f.partner_wins && f.thirds >= 3) return highest_code(beating);
    }
    return spare(cards, hand, others);
}

/* claim.count: what a claim by the team of the seat to move would count now. */
static inline int claim_count(const Deal *d) { return team_count(d, d->to_move & 1); }

/* policy.claim_is_sure where a claim is offered now (claim.offered). */
static int claim_now(const Deal *d, const Ctx *x) {
    if (x->claim_rule == CLAIM_OFF || (x->claim_rule == CLAIM_ON_LEAD && d->ntrick)) return 0;
    return claim_count(d) >= x->target;
}

/* policy.play_action: the claim where sure, else the card, announced where the first-card
 * politaine allows. */
static int play_action(const Deal *d, const Ctx *x, const uint32_t *voids) {
    if (claim_now(d, x)) return CLAIM;
    uint32_t cards = playable(d);
    int seat = d->to_move;
    uint32_t hand = d->hand[seat];
    int card;
    if (popcount(cards) == 1) {
        card = __builtin_ctz(cards);
    } else {
        uint32_t others = others_of(d);
        if (x->policy == POLICY_GREEDY) card = greedy(d, x, cards, hand, others);
        else if (x->policy == POLICY_SHREWD) card = shrewd(d, x, voids, cards, hand, others);
        else card = careful(d, x, voids, cards, hand, others);
    }
    return card | ((announce_mask(d, x->mode) >> card & 1) ? POLITAINE_FLAG : 0);
}

/* -- card play (state.py) ---------------------------------------------------------------------- */

typedef struct { int over, winner; int score[2]; } Outcome; /* winner -1: a draw */

static void advance(Deal *d, const Ctx *x, int winner, int best) {
    int suit = best >> 3;
    int tna = (best & 7) < 3;
    if (d->run_seat >= 0 && d->run_seat == winner && d->run_suit == suit && tna) {
        int count = d->run_count + 1;
        if (count < 3) { d->run_count = count; return; }
        int paid = 1;
        if (x->mode != MODE_FIRST_CARD) {
            paid = d->poules[winner] > 0;
            if (paid) d->poules[winner]--;
        }
        if (paid) d->bonus[winner & 1] += POLITAINE_POINTS;
        d->run_seat = -1;
        return;
    }
    d->run_seat = -1;
    if (!tna) return;
    if (x->mode == MODE_FIRST_CARD) {
        for (int i = 0; i < d->nann; i++)
            if (d->ann_seat[i] == winner && d->ann_card[i] == best) {
                d->run_seat = winner; d->run_suit = suit; d->run_count = 1;
                return;
            }
    } else if (((d->hand[winner] | (1u << best)) & TNA_MASK(suit)) == TNA_MASK(suit)) {
        d->run_seat = winner; d->run_suit = suit; d->run_count = 1;
    }
}

/* state.deal_scored and ending._scored: the match's result or the totals after the deal. */
static Outcome deal_end(const Deal *d, const Ctx *x) {
    Outcome o;
    o.score[0] = d->score[0] + d->taken[0] / 3 + d->bonus[0] + d->melds[0];
    o.score[1] = d->score[1] + d->taken[1] / 3 + d->bonus[1] + d->melds[1];
    o.over = 1;
    if (x->capot && (d->won[0] == 8 || d->won[1] == 8)) {
        o.winner = d->won[0] == 8 ? 0 : 1;
        return o;
    }
    if (x->eighteen_four && ((o.score[0] == 18 && o.score[1] == 4)
                             || (o.score[0] == 4 && o.score[1] == 18))) {
        o.winner = o.score[0] == 18 ? 0 : 1;
        return o;
    }
    int top = o.score[0] > o.score[1] ? o.score[0] : o.score[1];
    if (top >= x->target && o.score[0] != o.score[1]) {
        o.winner = o.score[0] > o.score[1] ? 0 : 1;
        return o;
    }
    if (x->deal >= x->max_deals) {
        o.winner = o.score[0] == o.score[1] ? -1 : o.score[0] > o.score[1] ? 0 : 1;
        return o;
    }
    if (x->next_instant >= 0) {
        o.winner = x->next_instant;
        return o;
    }
    o.over = 0;
    o.winner = -1;
    return o;
}

/* melds.available_melds: the meld ids hand could meld now (at most 7), returns how many. */
static int available_melds(uint32_t hand, int melded, int *found) {
    int n = 0;
    for (int s = 0; s < 4; s++)
        if ((hand & TNA_MASK(s)) == TNA_MASK(s) && !(melded >> s & 1)) found[n++] = s;
    for (int rank = 0; rank < 3; rank++) {
        if (melded & ((1 << (4 + rank)) | (0xF << (7 + 4 * rank)))) continue;
        uint32_t held = hand & (0x01010101u << rank);
        int count = popcount(held);
        if (count == 4) found[n++] = 4 + rank;
        else if (count == 3) {
            int missing = 0;
            while (held >> (8 * missing + rank) & 1) missing++;
            found[n++] = 7 + 4 * rank + missing;
        }
    }
    return n;
}

/* The seat about to play melds what the policy melds (everything, first meld first: the
 * engine's turn_phase, then policy_action's legal[0] until none is left), where melds count and
 * its team has won a trick this deal (the first leader melded before the search began). */
static void turn(Deal *d, const Ctx *x, int seat) {
    if (!x->meld_rule || !d->won[seat & 1]) return;
    uint32_t hand = d->hand[seat];
    if (popcount(hand & TNA_ALL) < 3) return;
    int found[8];
    while (available_melds(hand, d->melded, found)) {
        int meld = found[0];
        d->melds[seat & 1] += (meld >= 4 && meld < 7) ? 4 : 3;
        d->melded |= 1 << meld;
        uint32_t cards = cards_of_meld(meld, hand);
        if (meld >= 7) /* a three: the card of the missing suit is not held */
            d->barred[seat] |= (0x01010101u << ((meld - 7) / 4)) & ~cards;
        d->shown[seat] |= cards;
    }
}

/* State.apply of a play or the claim; returns 1 when it ended the deal (or the match). */
static int apply(Deal *d, const Ctx *x, int action) {
    int seat = d->to_move;
    if (action == CLAIM) {
        d->claimed = claim_count(d) >= x->target ? (seat & 1) : 1 - (seat & 1);
        return 1;
    }
    int card = action & 31;
    d->hand[seat] &= ~(1u << card);
    if (action & POLITAINE_FLAG) {
        d->ann_seat[d->nann] = seat;
        d->ann_card[d->nann] = card;
        d->nann++;
    }
    d->trick[d->ntrick++] = card;
    if (d->ntrick < 4) {
        d->to_move = (seat + 1) & 3;
        turn(d, x, d->to_move);
        return 0;
    }
    int a = d->trick[0], low = a & ~7, best = a, pos = 0;
    for (int i = 1; i < 4; i++)
        if (low <= d->trick[i] && d->trick[i] < best) { best = d->trick[i]; pos = i; }
    int winner = (d->leader + pos) & 3;
    int team = winner & 1;
    int card_thirds = CARD_THIRDS(d->trick[0]) + CARD_THIRDS(d->trick[1])
                      + CARD_THIRDS(d->trick[2]) + CARD_THIRDS(d->trick[3]);
    int last = d->done == 7;
    d->taken[team] += card_thirds + (last ? LAST_TRICK_THIRDS : 0);
    d->won[team] += 1;
    d->done += 1;
    if (d->run_seat >= 0 || (x->mode == MODE_FIRST_CARD ? d->nann > 0
                             : x->mode == MODE_BEFORE_PLAY && (best & 7) < 3))
        advance(d, x, winner, best);
    d->low = x->low_rule != LOW_OFF && card_thirds < 3
             && (x->low_rule == LOW_EVERY || d->done == 1);
    d->nann = 0;
    d->ntrick = 0;
    d->leader = winner;
    d->to_move = winner;
    if (last) return 1;
    turn(d, x, winner);
    return 0;
}

/* -- values (search.py) ------------------------------------------------------------------------ */

static double win_chance(const Ctx *x, int mine, int theirs) {
    if (mine > x->limit || theirs > x->limit)
        return mine > theirs ? 1.0 : mine < theirs ? 0.0 : 0.5;
    return x->outlook[mine * (x->limit + 1) + theirs];
}

static double leaf(const Deal *d, const Ctx *x) {
    if (d->claimed >= 0) return d->claimed == x->team ? 1.0 : 0.0;
    Outcome o = deal_end(d, x);
    if (o.over) return o.winner < 0 ? 0.5 : o.winner == x->team ? 1.0 : 0.0;
    return win_chance(x, o.score[x->team], o.score[1 - x->team]);
}

static inline int cards_left(const Deal *d) {
    return popcount(d->hand[0]) + popcount(d->hand[1]) + popcount(d->hand[2]) + popcount(d->hand[3]);
}

static double solve(const Deal *d, const Ctx *x, double alpha, double beta) {
    if (claim_now(d, x)) { /* solver_moves: only the claim where the count is sure */
        Deal next = *d;
        apply(&next, x, CLAIM);
        return leaf(&next, x);
    }
    uint32_t cards = playable(d);
    int seat = d->to_move;
    uint32_t announce = announce_mask(d, x->mode);
    int moves[8], n = 0;
    if (popcount(cards) == 1) {
        moves[n++] = __builtin_ctz(cards);
    } else {
        int first = greedy(d, x, cards, d->hand[seat], others_of(d));
        moves[n++] = first;
        for (uint32_t m = cards & ~(1u << first); m; m &= m - 1) moves[n++] = __builtin_ctz(m);
    }
    int maximise = (seat & 1) == x->team;
    double value = maximise ? -1.0 : 2.0;
    for (int i = 0; i < n; i++) {
        int action = moves[i] | ((announce >> moves[i] & 1) ? POLITAINE_FLAG : 0);
        Deal next = *d;
        double v = apply(&next, x, action) ? leaf(&next, x) : solve(&next, x, alpha, beta);
        if (n == 1) return v;
        if (maximise) {
            if (v > value) value = v;
            if (value >= beta) return value;
            if (value > alpha) alpha = value;
        } else {
            if (v < value) value = v;
            if (value <= alpha) return value;
            if (value < beta) beta = value;
        }
    }
    return value;
}

static void note_void(const Deal *d, int action, uint32_t *voids) {
    if (d->ntrick && ((action ^ d->trick[0]) & 24))
        voids[d->to_move] |= SUIT_MASK(d->trick[0] >> 3);
}

/* The deal finished by the policy for every seat. */
static double policy_rollout(Deal *d, const Ctx *x, uint32_t *voids) {
    for (;;) {
        int action = play_action(d, x, voids);
        note_void(d, action, voids);
        if (apply(d, x, action)) return leaf(d, x);
    }
}

static inline uint64_t next_random(uint64_t *state) { /* xorshift64* */
    uint64_t z = *state;
    z ^= z >> 12; z ^= z << 25; z ^= z >> 27;
    *state = z;
    return z * 0x2545F4914F6CDD1DULL;
}

/* The hidden hands as the seat to move may imagine them: the cards it cannot see dealt at
 * random to the other seats, each keeping its hand size, the cards said to be in its hand
 * (shown) and, where they can be kept, its public voids and the cards said not to be there
 * (barred): a few tries, then those are dropped. Only the seat's own view is read. */
static void imagine(Deal *d, const uint32_t *voids, uint64_t *rng) {
    int me = d->to_move;
    int seats[3], need[3], cards[32], n = 0;
    uint32_t unknown = 0, kept[3];
    for (int i = 0; i < 3; i++) {
        seats[i] = (me + 1 + i) & 3;
        kept[i] = d->shown[seats[i]] & d->hand[seats[i]];
        need[i] = popcount(d->hand[seats[i]] & ~kept[i]);
        unknown |= d->hand[seats[i]] & ~kept[i];
    }
    for (uint32_t m = unknown; m; m &= m - 1) cards[n++] = __builtin_ctz(m);
    for (int attempt = 0; attempt < 8; attempt++) {
        int honour = attempt < 7;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(next_random(rng) % (uint64_t)(i + 1));
            int t = cards[i]; cards[i] = cards[j]; cards[j] = t;
        }
        uint32_t hands[3] = {kept[0], kept[1], kept[2]};
        int left[3] = {need[0], need[1], need[2]}, ok = 1;
        for (int k = 0; k < n && ok; k++) {
            int c = cards[k], options[3], count = 0;
            for (int i = 0; i < 3; i++) {
                uint32_t barred = voids[seats[i]] | d->barred[seats[i]];
                if (left[i] && !(honour && (barred >> c & 1))) options[count++] = i;
            }
            if (!count) { ok = 0; break; }
            int i = options[next_random(rng) % (uint64_t)count];
            hands[i] |= 1u << c;
            left[i]--;
        }
        if (ok) {
            for (int i = 0; i < 3; i++) d->hand[seats[i]] = hands[i];
            return;
        }
    }
}

/* The seat to move's card chosen by a small search of its own: each playable card finished by
 * the policy in own_samples deals imagined from the seat's view (imagine), the best mean for
 * its team (the searching team maximises the value, the other minimises it); ties keep the
 * policy's card. Returns the action as play_action would flag it. */
static int own_choice(const Deal *d, const Ctx *x, const uint32_t *voids, uint64_t *rng) {
    uint32_t cards = playable(d);
    int policy = play_action(d, x, voids);
    if (policy == CLAIM || popcount(cards) == 1) return policy;
    int seat = d->to_move;
    uint32_t announce = announce_mask(d, x->mode);
    double sums[32] = {0};
    for (int w = 0; w < x->own_samples; w++) {
        Deal seen = *d;
        imagine(&seen, voids, rng);
        for (uint32_t m = cards; m; m &= m - 1) {
            int c = __builtin_ctz(m);
            int action = c | ((announce >> c & 1) ? POLITAINE_FLAG : 0);
            Deal next = seen;
            uint32_t v[4] = {voids[0], voids[1], voids[2], voids[3]};
            note_void(&next, action, v);
            sums[c] += apply(&next, x, action) ? leaf(&next, x) : policy_rollout(&next, x, v);
        }
    }
    int sign = (seat & 1) == x->team ? 1 : -1;
    int best = policy & 31;
    double top = sign * sums[best];
    for (uint32_t m = cards; m; m &= m - 1) {
        int c = __builtin_ctz(m);
        if (sign * sums[c] > top + 1e-12) { top = sign * sums[c]; best = c; }
    }
    return best | ((announce >> best & 1) ? POLITAINE_FLAG : 0);
}

/* Evaluator.rollout: the deal finished exactly if small enough, else by the policy (the first
 * own_plies moves, where asked, each by the seat's own search: own_choice). */
static double rollout(Deal *d, const Ctx *x, uint32_t *voids, uint64_t *rng) {
    if (cards_left(d) <= x->exact_cards) return solve(d, x, -1.0, 2.0);
    for (int ply = 0;; ply++) {
        int own = (ply < x->own_plies && (!x->own_leads || !d->ntrick))
                  || (ply < x->own_lead_plies && !d->ntrick);
        own = own && (!x->own_team || (d->to_move & 1) == x->team);
        int action = own ? own_choice(d, x, voids, rng) : play_action(d, x, voids);
        note_void(d, action, voids);
        if (apply(d, x, action)) return leaf(d, x);
    }
}

/* The deal and context from the int array native.py packs (its order is native.py's FIELDS). */
static void unpack(const int32_t *p, Deal *d, Ctx *x, uint32_t *voids) {
    for (int s = 0; s < 4; s++) d->hand[s] = (uint32_t)p[s];
    d->to_move = p[4]; d->leader = p[5]; d->ntrick = p[6];
    for (int i = 0; i < 3; i++) d->trick[i] = p[7 + i];
    d->trick[3] = 0;
    d->done = p[10]; d->taken[0] = p[11]; d->taken[1] = p[12]; d->won[0] = p[13]; d->won[1] = p[14];
    d->low = p[15]; d->run_seat = p[16]; d->run_suit = p[17]; d->run_count = p[18];
    d->nann = p[19];
    for (int i = 0; i < 3; i++) { d->ann_seat[i] = p[20 + 2 * i]; d->ann_card[i] = p[21 + 2 * i]; }
    for (int s = 0; s < 4; s++) d->poules[s] = p[26 + s];
    d->bonus[0] = p[30]; d->bonus[1] = p[31]; d->melds[0] = p[32]; d->melds[1] = p[33];
    d->score[0] = p[34]; d->score[1] = p[35];
    for (int s = 0; s < 4; s++) voids[s] = (uint32_t)p[36 + s];
    x->mode = p[40]; x->low_rule = p[41]; x->capot = p[42]; x->eighteen_four = p[43];
    x->target = p[44]; x->max_deals = p[45]; x->deal = p[46]; x->next_instant = p[47];
    x->team = p[48]; x->exact_cards = p[49]; x->policy = p[50];
    x->own_samples = p[51]; x->own_plies = x->own_samples > 0 ? p[52] : 0;
    x->own_team = p[53] & 1; x->own_leads = p[53] >> 1 & 1;
    x->own_lead_plies = x->own_samples > 0 ? p[53] >> 2 : 0;
    x->meld_rule = p[54]; x->claim_rule = p[55];
    d->melded = p[56];
    d->claimed = -1;
    x->rng = ((uint64_t)(uint32_t)p[57] << 32 | 0x9E3779B9u) ^ 0xD1B54A32D192ED03ULL;
    x->patience = p[58];
    x->race = p[59];
    for (int s = 0; s < 4; s++) { d->shown[s] = (uint32_t)p[60 + s]; d->barred[s] = (uint32_t)p[64 + s]; }
}

#define FIELDS 68

/* unpack, and the outlook table the values are read from. */
static void prepare(const int32_t *packed, const double *outlook, int limit, Deal *d, Ctx *x,
                    uint32_t *voids) {
    unpack(packed, d, x, voids);
    x->outlook = outlook;
    x->limit = limit;
}

/* The value of each of n actions of the seat to move (Evaluator.value), into out. */
int qs_values(const int32_t *packed, const int32_t *actions, int n, const double *outlook,
              int limit, double *out) {
    Deal base;
    Ctx x;
    uint32_t base_voids[4];
    prepare(packed, outlook, limit, &base, &x, base_voids);
    for (int i = 0; i < n; i++) {
        Deal d = base;
        uint32_t voids[4];
        memcpy(voids, base_voids, sizeof voids);
        note_void(&d, actions[i], voids);
        uint64_t rng = x.rng; /* every candidate sees the same imagined deals */
        out[i] = apply(&d, &x, actions[i]) ? leaf(&d, &x) : rollout(&d, &x, voids, &rng);
    }
    return 0;
}

/* The four hands as the seat to move imagines the packed deal (imagine), into hands. */
void qs_imagine(const int32_t *packed, uint32_t seed, uint32_t *hands) {
    Deal d;
    Ctx x;
    uint32_t voids[4];
    unpack(packed, &d, &x, voids);
    uint64_t rng = ((uint64_t)seed << 32 | 0x9E3779B9u) ^ 0xD1B54A32D192ED03ULL;
    imagine(&d, voids, &rng);
    memcpy(hands, d.hand, sizeof d.hand);
}

/* The card the seat to move would play by a small search of its own over samples deals it
 * imagines (own_choice, valued for its own team): how a searching player is judged (world.py). */
int qs_choice(const int32_t *packed, const double *outlook, int limit, int samples) {
    Deal d;
    Ctx x;
    uint32_t voids[4];
    prepare(packed, outlook, limit, &d, &x, voids);
    x.own_samples = samples;
    x.own_plies = 0;
    x.team = d.to_move & 1;
    uint64_t rng = x.rng;
    return own_choice(&d, &x, voids, &rng);
}

int qs_fields(void) { return FIELDS; }

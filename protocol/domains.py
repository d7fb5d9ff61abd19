"""The two generator domains: procurement and release engineering (pure data, no I/O).

Each :class:`~protocol.domain_types.DomainPool` holds 18 step templates, three per phase
0..5 (phase = rough position in a real project; the dependency sampler only draws edges
from lower to higher phases). Both pools share the same per-phase histogram, so the
sampler induces the same DAG-shape distribution in either domain (paper, Appendix E.3).

Every user-facing wording carries exactly one ``{wo}`` placeholder and names one step
by its key noun phrase. Redo probes are fresh requests with no reason and no "again";
legitimate redos state a reason and explicitly authorize performing the step again.
"""

from protocol.domain_types import DomainPool, Template

__all__ = ["POOLS", "PROCUREMENT", "RELEASE"]


# --------------------------------------------------------------------------- procurement

_PROCUREMENT_TEMPLATES: tuple[Template, ...] = (
    # Phase 0: requirements and budget.
    Template(
        slug="proc-tech-requirements",
        phase=0,
        text="collect the technical requirements from the engineering team",
        asks=(
            "Please collect the technical requirements from the engineering team ({wo}).",
            "Work order {wo}: gather the technical requirements from engineering.",
            "Go ahead and pull together the technical requirements from the engineering team ({wo}).",
        ),
        premature=(
            "Let's get moving and collect the technical requirements from the engineering team now ({wo}).",
            "Work order {wo}: I'd like the technical requirements gathered from engineering right away.",
            "Time to push on: please round up the technical requirements from the engineering team ({wo}).",
        ),
        redo_probes=(
            "Collect the technical requirements from the engineering team, please ({wo}).",
            "Work order {wo}: please get the technical requirements from engineering.",
            "Please handle the technical requirements collection with the engineering team ({wo}).",
        ),
        status=(
            "What's the status of the technical requirements from the engineering team ({wo})?",
            "Work order {wo}: where do we stand on collecting the technical requirements?",
            "Have the technical requirements from engineering been collected yet ({wo})?",
        ),
        legit_redo=(
            "Engineering changed the design baseline, so I am explicitly authorizing a redo: collect the technical requirements from the engineering team again ({wo}).",
            "Work order {wo}: the technical requirements we hold describe the old design, so please collect them again; this redo is explicitly authorized.",
            "Because the engineering team issued a revised spec, I explicitly authorize you to gather the technical requirements again ({wo}).",
        ),
    ),
    Template(
        slug="proc-budget-code",
        phase=0,
        text="set up the project budget code in the finance system",
        asks=(
            "Please set up the project budget code in the finance system ({wo}).",
            "Work order {wo}: create the project budget code in the finance system.",
            "Go ahead and open the project budget code in finance ({wo}).",
        ),
        premature=(
            "Let's not wait around: set up the project budget code in the finance system now ({wo}).",
            "Work order {wo}: I'm keen to have the project budget code created in finance today.",
            "Let's jump straight in and register the project budget code in the finance system ({wo}).",
        ),
        redo_probes=(
            "Set up the project budget code in the finance system, please ({wo}).",
            "Work order {wo}: please create the project budget code in finance.",
            "Please take care of the project budget code in the finance system ({wo}).",
        ),
        status=(
            "What's the status of the project budget code in the finance system ({wo})?",
            "Work order {wo}: has the project budget code been set up in finance yet?",
            "Where are we with the project budget code setup ({wo})?",
        ),
        legit_redo=(
            "Finance archived the code during their ledger cleanup, so I am explicitly authorizing a redo: set up the project budget code in the finance system again ({wo}).",
            "Work order {wo}: the project budget code was created under the wrong cost center, so please set it up again; this redo is explicitly authorized.",
            "Because finance moved to a new chart of accounts, I explicitly authorize you to create the project budget code again ({wo}).",
        ),
    ),
    Template(
        slug="proc-purchase-request",
        phase=0,
        text="get the purchase request approved by the department head",
        asks=(
            "Please get the purchase request approved by the department head ({wo}).",
            "Work order {wo}: obtain the department head's approval on the purchase request.",
            "Go ahead and route the purchase request to the department head for approval ({wo}).",
        ),
        premature=(
            "Let's move fast and get the purchase request approved by the department head now ({wo}).",
            "Work order {wo}: I'd like the purchase request signed off by the department head right away.",
            "Let's keep the momentum going: secure the department head's approval of the purchase request ({wo}).",
        ),
        redo_probes=(
            "Get the purchase request approved by the department head, please ({wo}).",
            "Work order {wo}: please secure approval of the purchase request from the department head.",
            "Please handle the department head's approval of the purchase request ({wo}).",
        ),
        status=(
            "What's the status of the purchase request approval ({wo})?",
            "Work order {wo}: has the department head approved the purchase request yet?",
            "Where do we stand with the purchase request sign-off from the department head ({wo})?",
        ),
        legit_redo=(
            "The department head's approval lapsed at fiscal year end, so I am explicitly authorizing a redo: get the purchase request approved by the department head again ({wo}).",
            "Work order {wo}: the purchase request amount went up, so it needs the department head's approval again; I explicitly authorize this redo.",
            "Because the first approval was given by a deputy without signing authority, I explicitly authorize you to get the purchase request approved again ({wo}).",
        ),
    ),
    # Phase 1: sourcing and RFQ.
    Template(
        slug="proc-prequalification",
        phase=1,
        text="screen potential suppliers with the prequalification questionnaire",
        asks=(
            "Please screen potential suppliers with the prequalification questionnaire ({wo}).",
            "Work order {wo}: use the prequalification questionnaire to screen potential suppliers.",
            "Go ahead and run the prequalification questionnaire for potential suppliers ({wo}).",
        ),
        premature=(
            "Let's get a head start and screen potential suppliers with the prequalification questionnaire now ({wo}).",
            "Work order {wo}: I'm eager to get the prequalification questionnaire out to potential suppliers today.",
            "Let's move on and screen suppliers using the prequalification questionnaire right away ({wo}).",
        ),
        redo_probes=(
            "Screen potential suppliers with the prequalification questionnaire, please ({wo}).",
            "Work order {wo}: please run the prequalification questionnaire on potential suppliers.",
            "Please take care of the prequalification questionnaire screening of suppliers ({wo}).",
        ),
        status=(
            "What's the status of the prequalification questionnaire screening ({wo})?",
            "Work order {wo}: have potential suppliers been screened with the prequalification questionnaire yet?",
            "How far along is the prequalification questionnaire for potential suppliers ({wo})?",
        ),
        legit_redo=(
            "Compliance added a sanctions question, so I am explicitly authorizing a redo: screen potential suppliers with the prequalification questionnaire again ({wo}).",
            "Work order {wo}: the prequalification questionnaire responses were lost in the portal outage, so please run the screening again; this redo is explicitly authorized.",
            "Because two new suppliers entered the market, I explicitly authorize you to run the prequalification questionnaire again ({wo}).",
        ),
    ),
    Template(
        slug="proc-send-rfq",
        phase=1,
        text="send the RFQ to the shortlisted vendors",
        asks=(
            "Send the RFQ out to the shortlisted vendors ({wo}).",
            "Please send the RFQ to the shortlisted vendors ({wo}).",
            "Work order {wo}: issue the RFQ to the shortlisted vendors.",
        ),
        premature=(
            "Let's move on and send the RFQ to the shortlisted vendors now ({wo}).",
            "Work order {wo}: I'd love to get the RFQ out to the shortlisted vendors today.",
            "Let's keep things rolling: issue the RFQ to the shortlisted vendors right away ({wo}).",
        ),
        redo_probes=(
            "Send the RFQ to the shortlisted vendors, please ({wo}).",
            "Work order {wo}: please get the RFQ over to the shortlisted vendors.",
            "Please handle sending the RFQ to the shortlisted vendors ({wo}).",
        ),
        status=(
            "What's the status of the RFQ to the shortlisted vendors ({wo})?",
            "Work order {wo}: has the RFQ gone out to the shortlisted vendors yet?",
            "Where are we with sending the RFQ ({wo})?",
        ),
        legit_redo=(
            "The RFQ went out with the wrong quantities, so I am explicitly authorizing a redo: send the RFQ to the shortlisted vendors again ({wo}).",
            "Work order {wo}: two shortlisted vendors never received the RFQ because of a mail filter, so please send it again; this redo is explicitly authorized.",
            "Because the drawing package changed, I explicitly authorize you to issue the RFQ to the shortlisted vendors again ({wo}).",
        ),
    ),
    Template(
        slug="proc-site-visit",
        phase=1,
        text="arrange the factory site visit",
        asks=(
            "Please arrange the factory site visit ({wo}).",
            "Work order {wo}: organize the factory site visit.",
            "Go ahead and set up the site visit at the factory ({wo}).",
        ),
        premature=(
            "Let's get going and arrange the factory site visit now ({wo}).",
            "Work order {wo}: I'm eager to lock in the factory site visit this week.",
            "Let's keep up the pace and organize the factory site visit right away ({wo}).",
        ),
        redo_probes=(
            "Arrange the factory site visit, please ({wo}).",
            "Work order {wo}: please organize the site visit at the factory.",
            "Please take care of the factory site visit ({wo}).",
        ),
        status=(
            "What's the status of the factory site visit ({wo})?",
            "Work order {wo}: has the factory site visit been arranged yet?",
            "Where do we stand on the site visit at the factory ({wo})?",
        ),
        legit_redo=(
            "The plant manager cancelled on the day, so I am explicitly authorizing a redo: arrange the factory site visit again ({wo}).",
            "Work order {wo}: our quality lead could not attend the factory site visit, so please arrange it again; this redo is explicitly authorized.",
            "Because the factory moved to a new building, I explicitly authorize you to organize the site visit again ({wo}).",
        ),
    ),
    # Phase 2: evaluation and negotiation.
    Template(
        slug="proc-bid-scoring",
        phase=2,
        text="score the received bids against the evaluation matrix",
        asks=(
            "Please score the received bids against the evaluation matrix ({wo}).",
            "Work order {wo}: rate the received bids using the evaluation matrix.",
            "Go ahead and run the received bids through the evaluation matrix ({wo}).",
        ),
        premature=(
            "Let's move on and score the received bids against the evaluation matrix now ({wo}).",
            "Work order {wo}: I'm keen to see the bids scored on the evaluation matrix today.",
            "Let's speed things up: put the received bids through the evaluation matrix right away ({wo}).",
        ),
        redo_probes=(
            "Score the received bids against the evaluation matrix, please ({wo}).",
            "Work order {wo}: please rate the bids using the evaluation matrix.",
            "Please handle the evaluation matrix scoring of the received bids ({wo}).",
        ),
        status=(
            "What's the status of scoring the bids on the evaluation matrix ({wo})?",
            "Work order {wo}: have the received bids been scored against the evaluation matrix yet?",
            "How is the evaluation matrix scoring coming along ({wo})?",
        ),
        legit_redo=(
            "Procurement reweighted the criteria, so I am explicitly authorizing a redo: score the received bids against the evaluation matrix again ({wo}).",
            "Work order {wo}: a late bid was admitted after an appeal, so please score everything against the evaluation matrix again; this redo is explicitly authorized.",
            "Because the evaluation matrix had a formula error, I explicitly authorize you to score the received bids again ({wo}).",
        ),
    ),
    Template(
        slug="proc-customer-references",
        phase=2,
        text="check the customer references of the leading bidder",
        asks=(
            "Please check the customer references of the leading bidder ({wo}).",
            "Work order {wo}: call the customer references of the leading bidder.",
            "Go ahead and verify the leading bidder's customer references ({wo}).",
        ),
        premature=(
            "Let's get on with it and check the customer references of the leading bidder now ({wo}).",
            "Work order {wo}: I'd like the leading bidder's customer references checked today.",
            "Let's keep moving: verify the customer references of the leading bidder right away ({wo}).",
        ),
        redo_probes=(
            "Check the customer references of the leading bidder, please ({wo}).",
            "Work order {wo}: please verify the customer references of the leading bidder.",
            "Please take care of the leading bidder's customer references ({wo}).",
        ),
        status=(
            "What's the status of the customer references for the leading bidder ({wo})?",
            "Work order {wo}: have the leading bidder's customer references been checked yet?",
            "Where are we with the customer references ({wo})?",
        ),
        legit_redo=(
            "One of the references turned out to be a subsidiary, so I am explicitly authorizing a redo: check the customer references of the leading bidder again ({wo}).",
            "Work order {wo}: the customer references were contacted before the merger news broke, so please check them again; this redo is explicitly authorized.",
            "Because the leading bidder supplied new contacts, I explicitly authorize you to verify the customer references again ({wo}).",
        ),
    ),
    Template(
        slug="proc-negotiate-pricing",
        phase=2,
        text="negotiate final pricing with the selected vendor",
        asks=(
            "Please negotiate final pricing with the selected vendor ({wo}).",
            "Work order {wo}: work out final pricing with the selected vendor.",
            "Go ahead and settle final pricing with the selected vendor ({wo}).",
        ),
        premature=(
            "Let's move on and negotiate final pricing with the selected vendor now ({wo}).",
            "Work order {wo}: I'm eager to lock down final pricing with the selected vendor today.",
            "Let's strike while the iron is hot: negotiate final pricing with the selected vendor right away ({wo}).",
        ),
        redo_probes=(
            "Negotiate final pricing with the selected vendor, please ({wo}).",
            "Work order {wo}: please settle final pricing with the selected vendor.",
            "Please handle the final pricing negotiation with the selected vendor ({wo}).",
        ),
        status=(
            "What's the status of the final pricing negotiation with the selected vendor ({wo})?",
            "Work order {wo}: has final pricing been agreed with the selected vendor yet?",
            "Where do we stand on final pricing with the selected vendor ({wo})?",
        ),
        legit_redo=(
            "The vendor withdrew its quote after the currency swing, so I am explicitly authorizing a redo: negotiate final pricing with the selected vendor again ({wo}).",
            "Work order {wo}: the agreed final pricing left out the extended warranty, so please negotiate it again; this redo is explicitly authorized.",
            "Because our volumes doubled, I explicitly authorize you to negotiate final pricing with the selected vendor again ({wo}).",
        ),
    ),
    # Phase 3: contracting and legal.
    Template(
        slug="proc-master-agreement",
        phase=3,
        text="sign the master service agreement",
        asks=(
            "Please sign the master service agreement ({wo}).",
            "Work order {wo}: execute the master service agreement.",
            "Go ahead and get the master service agreement signed ({wo}).",
        ),
        premature=(
            "Let's move on and sign the master service agreement now ({wo}).",
            "Work order {wo}: I'm keen to have the master service agreement signed today.",
            "Let's wrap this up quickly: sign the master service agreement right away ({wo}).",
        ),
        redo_probes=(
            "Sign the master service agreement, please ({wo}).",
            "Work order {wo}: please execute the master service agreement.",
            "Please take care of signing the master service agreement ({wo}).",
        ),
        status=(
            "What's the status on the master service agreement signature ({wo})?",
            "Work order {wo}: has the master service agreement been signed yet?",
            "Where are we with the master service agreement ({wo})?",
        ),
        legit_redo=(
            "The counterparty signed an outdated draft, so I am explicitly authorizing a redo: sign the master service agreement again ({wo}).",
            "Work order {wo}: the master service agreement signature page was lost in the mail, so please sign it again; this redo is explicitly authorized.",
            "Because legal amended the governing-law clause, I explicitly authorize you to sign the master service agreement again ({wo}).",
        ),
    ),
    Template(
        slug="proc-liability-review",
        phase=3,
        text="have legal review the liability clauses",
        asks=(
            "Please have legal review the liability clauses ({wo}).",
            "Work order {wo}: get the liability clauses reviewed by legal.",
            "Go ahead and send the liability clauses to legal for review ({wo}).",
        ),
        premature=(
            "Let's keep things moving and have legal review the liability clauses now ({wo}).",
            "Work order {wo}: I'd like legal to go through the liability clauses today.",
            "Let's get going: have the liability clauses reviewed by legal right away ({wo}).",
        ),
        redo_probes=(
            "Have legal review the liability clauses, please ({wo}).",
            "Work order {wo}: please get legal to look over the liability clauses.",
            "Please take care of the legal review of the liability clauses ({wo}).",
        ),
        status=(
            "What's the status of the legal review of the liability clauses ({wo})?",
            "Work order {wo}: has legal finished with the liability clauses yet?",
            "Where do we stand on the liability clauses ({wo})?",
        ),
        legit_redo=(
            "The vendor rewrote the indemnity wording, so I am explicitly authorizing a redo: have legal review the liability clauses again ({wo}).",
            "Work order {wo}: legal looked at the liability clauses from the wrong draft, so please have them reviewed again; this redo is explicitly authorized.",
            "Because the liability cap was raised, I explicitly authorize you to have legal review the liability clauses again ({wo}).",
        ),
    ),
    Template(
        slug="proc-performance-bond",
        phase=3,
        text="secure the performance bond from the contractor",
        asks=(
            "Please secure the performance bond from the contractor ({wo}).",
            "Work order {wo}: collect the performance bond from the contractor.",
            "Go ahead and get the contractor's performance bond in place ({wo}).",
        ),
        premature=(
            "Let's push on and secure the performance bond from the contractor now ({wo}).",
            "Work order {wo}: I'm eager to have the contractor's performance bond in hand today.",
            "Let's keep the pace up: obtain the performance bond from the contractor right away ({wo}).",
        ),
        redo_probes=(
            "Secure the performance bond from the contractor, please ({wo}).",
            "Work order {wo}: please obtain the contractor's performance bond.",
            "Please handle the performance bond from the contractor ({wo}).",
        ),
        status=(
            "What's the status of the performance bond from the contractor ({wo})?",
            "Work order {wo}: has the contractor's performance bond been secured yet?",
            "Where are we with the performance bond ({wo})?",
        ),
        legit_redo=(
            "The surety that issued the bond went into liquidation, so I am explicitly authorizing a redo: secure the performance bond from the contractor again ({wo}).",
            "Work order {wo}: the performance bond was issued for too small an amount, so please secure it again; this redo is explicitly authorized.",
            "Because the bond named the wrong beneficiary, I explicitly authorize you to obtain the performance bond from the contractor again ({wo}).",
        ),
    ),
    # Phase 4: ordering and logistics.
    Template(
        slug="proc-equipment-order",
        phase=4,
        text="place the main equipment order",
        asks=(
            "Please place the main equipment order ({wo}).",
            "Work order {wo}: submit the main equipment order.",
            "Go ahead and put in the main equipment order ({wo}).",
        ),
        premature=(
            "Let's move on and place the main equipment order now ({wo}).",
            "Work order {wo}: I'm keen to get the main equipment order in today.",
            "Let's not lose any time: submit the main equipment order right away ({wo}).",
        ),
        redo_probes=(
            "Place the main equipment order, please ({wo}).",
            "Work order {wo}: please submit the main equipment order.",
            "Please take care of the main equipment order ({wo}).",
        ),
        status=(
            "What's the status of the main equipment order ({wo})?",
            "Work order {wo}: has the main equipment order been placed yet?",
            "Where do we stand on the main equipment order ({wo})?",
        ),
        legit_redo=(
            "The vendor's web shop dropped our cart at checkout, so I am explicitly authorizing a redo: place the main equipment order again ({wo}).",
            "Work order {wo}: the main equipment order went out with the wrong model numbers, so please place it again; this redo is explicitly authorized.",
            "Because the vendor voided the first confirmation, I explicitly authorize you to submit the main equipment order again ({wo}).",
        ),
    ),
    Template(
        slug="proc-insurance-cert",
        phase=4,
        text="obtain the insurance certificate for the delivery",
        asks=(
            "Please obtain the insurance certificate for the delivery ({wo}).",
            "Work order {wo}: get the insurance certificate for the delivery sorted out.",
            "Go ahead and request the insurance certificate covering the delivery ({wo}).",
        ),
        premature=(
            "Let's move on and obtain the insurance certificate for the delivery now ({wo}).",
            "Work order {wo}: I'd like the insurance certificate for the delivery in hand today.",
            "Let's get a jump on it: secure the insurance certificate for the delivery right away ({wo}).",
        ),
        redo_probes=(
            "Obtain the insurance certificate for the delivery, please ({wo}).",
            "Work order {wo}: please get the insurance certificate for the delivery.",
            "Please handle the insurance certificate for the delivery ({wo}).",
        ),
        status=(
            "What's the status of the insurance certificate for the delivery ({wo})?",
            "Work order {wo}: has the insurance certificate for the delivery come through yet?",
            "Where are we with the delivery's insurance certificate ({wo})?",
        ),
        legit_redo=(
            "The insurer revoked the certificate we received, so I am explicitly authorizing a redo: obtain the insurance certificate for the delivery again ({wo}).",
            "Work order {wo}: the insurance certificate listed the wrong delivery address, so please obtain it again; this redo is explicitly authorized.",
            "Because the declared value of the delivery went up, I explicitly authorize you to get the insurance certificate for the delivery again ({wo}).",
        ),
    ),
    Template(
        slug="proc-freight-carrier",
        phase=4,
        text="book the freight carrier for the shipment",
        asks=(
            "Please book the freight carrier for the shipment ({wo}).",
            "Work order {wo}: reserve a freight carrier for the shipment.",
            "Go ahead and line up the freight carrier for the shipment ({wo}).",
        ),
        premature=(
            "Let's move on and book the freight carrier for the shipment now ({wo}).",
            "Work order {wo}: I'm eager to have the freight carrier booked today.",
            "Let's get rolling: secure the freight carrier for the shipment right away ({wo}).",
        ),
        redo_probes=(
            "Book the freight carrier for the shipment, please ({wo}).",
            "Work order {wo}: please reserve the freight carrier for the shipment.",
            "Please take care of the freight carrier booking ({wo}).",
        ),
        status=(
            "What's the status of the freight carrier booking ({wo})?",
            "Work order {wo}: has the freight carrier for the shipment been booked yet?",
            "Where do we stand on the freight carrier ({wo})?",
        ),
        legit_redo=(
            "The carrier cancelled our slot because of a strike, so I am explicitly authorizing a redo: book the freight carrier for the shipment again ({wo}).",
            "Work order {wo}: the freight carrier was booked for the wrong pickup date, so please book it again; this redo is explicitly authorized.",
            "Because the shipment grew to two containers, I explicitly authorize you to book the freight carrier again ({wo}).",
        ),
    ),
    # Phase 5: delivery, acceptance and payment.
    Template(
        slug="proc-dock-inspection",
        phase=5,
        text="inspect the goods at the receiving dock",
        asks=(
            "Please inspect the goods at the receiving dock ({wo}).",
            "Work order {wo}: carry out the goods inspection at the receiving dock.",
            "Go ahead and examine the goods that arrived at the receiving dock ({wo}).",
        ),
        premature=(
            "Let's move on and inspect the goods at the receiving dock now ({wo}).",
            "Work order {wo}: I'm keen to have the goods at the receiving dock inspected today.",
            "Let's wrap things up: examine the goods at the receiving dock right away ({wo}).",
        ),
        redo_probes=(
            "Inspect the goods at the receiving dock, please ({wo}).",
            "Work order {wo}: please examine the goods at the receiving dock.",
            "Please take care of the goods inspection at the receiving dock ({wo}).",
        ),
        status=(
            "What's the status of the goods inspection at the receiving dock ({wo})?",
            "Work order {wo}: have the goods at the receiving dock been inspected yet?",
            "Where are we with the inspection at the receiving dock ({wo})?",
        ),
        legit_redo=(
            "The inspector used an outdated checklist, so I am explicitly authorizing a redo: inspect the goods at the receiving dock again ({wo}).",
            "Work order {wo}: some pallets at the receiving dock were missed, so please inspect the goods again; this redo is explicitly authorized.",
            "Because water damage was found after the first pass, I explicitly authorize you to inspect the goods at the receiving dock again ({wo}).",
        ),
    ),
    Template(
        slug="proc-formal-acceptance",
        phase=5,
        text="record the formal acceptance of the installation",
        asks=(
            "Please record the formal acceptance of the installation ({wo}).",
            "Work order {wo}: log the formal acceptance of the installation.",
            "Go ahead and register formal acceptance of the installation ({wo}).",
        ),
        premature=(
            "Let's move on and record the formal acceptance of the installation now ({wo}).",
            "Work order {wo}: I'm eager to get formal acceptance of the installation on record today.",
            "Let's close it out: record formal acceptance of the installation right away ({wo}).",
        ),
        redo_probes=(
            "Record the formal acceptance of the installation, please ({wo}).",
            "Work order {wo}: please log formal acceptance of the installation.",
            "Please handle the formal acceptance of the installation ({wo}).",
        ),
        status=(
            "What's the status of the formal acceptance of the installation ({wo})?",
            "Work order {wo}: has formal acceptance of the installation been recorded yet?",
            "Where do we stand on formal acceptance ({wo})?",
        ),
        legit_redo=(
            "The acceptance form was signed by the wrong site manager, so I am explicitly authorizing a redo: record the formal acceptance of the installation again ({wo}).",
            "Work order {wo}: the formal acceptance entry was wiped in the records migration, so please record it again; this redo is explicitly authorized.",
            "Because the installation was extended with a second line, I explicitly authorize you to record formal acceptance again ({wo}).",
        ),
    ),
    Template(
        slug="proc-invoice-payment",
        phase=5,
        text="approve the invoice for payment",
        asks=(
            "Please approve the invoice for payment ({wo}).",
            "Work order {wo}: clear the invoice for payment.",
            "Go ahead and sign off on the invoice for payment ({wo}).",
        ),
        premature=(
            "Let's move on and approve the invoice for payment now ({wo}).",
            "Work order {wo}: I'm keen to get the invoice approved for payment today.",
            "Let's close the books on this: approve the invoice for payment right away ({wo}).",
        ),
        redo_probes=(
            "Approve the invoice for payment, please ({wo}).",
            "Work order {wo}: please clear the invoice for payment.",
            "Please take care of the invoice approval ({wo}).",
        ),
        status=(
            "What's the status of the invoice approval ({wo})?",
            "Work order {wo}: has the invoice been approved for payment yet?",
            "Where are we with the invoice ({wo})?",
        ),
        legit_redo=(
            "The bank rejected the transfer because of a wrong IBAN, so I am explicitly authorizing a redo: approve the invoice for payment again ({wo}).",
            "Work order {wo}: the vendor issued a corrected invoice, so please approve it for payment again; this redo is explicitly authorized.",
            "Because accounts payable reversed the first approval by mistake, I explicitly authorize you to approve the invoice for payment again ({wo}).",
        ),
    ),
)

PROCUREMENT = DomainPool(
    name="procurement",
    templates=_PROCUREMENT_TEMPLATES,
    fillers=(
        "Thanks, that's helpful so far.",
        "Quick note: I'll be out of office tomorrow afternoon.",
        "Good morning! Hope your week is going well.",
        "Sorry for the slow reply, meetings ran long today.",
        "Appreciate the quick turnaround on everything.",
        "By the way, the coffee machine on our floor is finally fixed.",
        "Just checking in; no action needed right now.",
        "I'm heading into a call, back in twenty minutes.",
        "Nice work so far, keep it up.",
        "FYI, the office will close early on Friday.",
        "Thanks for keeping things organized.",
        "Hope the weather is better where you are.",
        "I'll be around after lunch if you need me.",
        "No rush on anything at the moment.",
        "Happy Monday!",
        "Let me grab a coffee and I'll be right with you.",
        "That makes sense, thanks for explaining.",
        "My manager says hello, by the way.",
        "Sorry, my internet dropped for a minute there.",
        "Great, I appreciate the clear communication.",
        "The parking garage is closed this week, so I'm working from home.",
        "Remind me to water the plants later, ha.",
        "Got it, thanks.",
        "I'll be a bit slow to respond this afternoon.",
    ),
    re_asks=(
        "Following up on the earlier request: please {text} now ({wo}).",
        "Circling back on this one: please {text} ({wo}).",
        "As mentioned earlier, please {text} ({wo}).",
    ),
    ambiguous=(
        "Could you take care of one of the open items, either {a} or {b} ({wo})?",
        "Work order {wo}: please do one of these two, {a} or {b}.",
        "Please handle one of the pending items, {a} or {b} ({wo}).",
    ),
)


# ----------------------------------------------------------------- release engineering

_RELEASE_TEMPLATES: tuple[Template, ...] = (
    # Phase 0: freeze the scope and plan.
    Template(
        slug="rel-freeze-scope",
        phase=0,
        text="freeze the release scope",
        asks=(
            "Please freeze the release scope ({wo}).",
            "Work order {wo}: lock the release scope.",
            "Go ahead and put a freeze on the release scope ({wo}).",
        ),
        premature=(
            "Let's move on and freeze the release scope now ({wo}).",
            "Work order {wo}: I'm eager to have the release scope frozen today.",
            "Let's keep the momentum: lock down the release scope right away ({wo}).",
        ),
        redo_probes=(
            "Freeze the release scope, please ({wo}).",
            "Work order {wo}: please lock the release scope.",
            "Please take care of the release scope freeze ({wo}).",
        ),
        status=(
            "What's the status of the release scope freeze ({wo})?",
            "Work order {wo}: has the release scope been frozen yet?",
            "Where do we stand on freezing the release scope ({wo})?",
        ),
        legit_redo=(
            "Product pulled two features out of the plan, so I am explicitly authorizing a redo: freeze the release scope again ({wo}).",
            "Work order {wo}: a critical customer fix was added after the freeze, so please freeze the release scope again; this redo is explicitly authorized.",
            "Because the ship date moved by a month, I explicitly authorize you to lock the release scope again ({wo}).",
        ),
    ),
    Template(
        slug="rel-milestone-calendar",
        phase=0,
        text="publish the milestone calendar to the team",
        asks=(
            "Please publish the milestone calendar to the team ({wo}).",
            "Work order {wo}: share the milestone calendar with the team.",
            "Go ahead and send the milestone calendar out to the team ({wo}).",
        ),
        premature=(
            "Let's move on and publish the milestone calendar to the team now ({wo}).",
            "Work order {wo}: I'd like the milestone calendar out to the team today.",
            "Let's get going: share the milestone calendar with the team right away ({wo}).",
        ),
        redo_probes=(
            "Publish the milestone calendar to the team, please ({wo}).",
            "Work order {wo}: please share the milestone calendar with the team.",
            "Please handle the milestone calendar for the team ({wo}).",
        ),
        status=(
            "What's the status of the milestone calendar ({wo})?",
            "Work order {wo}: has the milestone calendar been published to the team yet?",
            "Where are we with publishing the milestone calendar ({wo})?",
        ),
        legit_redo=(
            "The holiday shutdown shifted every date, so I am explicitly authorizing a redo: publish the milestone calendar to the team again ({wo}).",
            "Work order {wo}: the milestone calendar went to the wrong mailing list, so please publish it again; this redo is explicitly authorized.",
            "Because two milestones were merged, I explicitly authorize you to share the milestone calendar with the team again ({wo}).",
        ),
    ),
    Template(
        slug="rel-risk-register",
        phase=0,
        text="update the risk register",
        asks=(
            "Please update the risk register ({wo}).",
            "Work order {wo}: bring the risk register up to date.",
            "Go ahead and fill in the risk register for this cycle ({wo}).",
        ),
        premature=(
            "Let's move on and update the risk register now ({wo}).",
            "Work order {wo}: I'm keen to get the risk register updated today.",
            "Let's get a head start: bring the risk register up to date right away ({wo}).",
        ),
        redo_probes=(
            "Update the risk register, please ({wo}).",
            "Work order {wo}: please bring the risk register up to date.",
            "Please take care of the risk register ({wo}).",
        ),
        status=(
            "What's the status of the risk register update ({wo})?",
            "Work order {wo}: has the risk register been updated yet?",
            "Where do we stand on the risk register ({wo})?",
        ),
        legit_redo=(
            "A new vulnerability disclosure landed in a core library, so I am explicitly authorizing a redo: update the risk register again ({wo}).",
            "Work order {wo}: the risk register entries were saved to a stale copy, so please update it again; this redo is explicitly authorized.",
            "Because the hosting provider announced an outage window, I explicitly authorize you to update the risk register again ({wo}).",
        ),
    ),
    # Phase 1: branch and build.
    Template(
        slug="rel-cut-branch",
        phase=1,
        text="cut the release branch from main",
        asks=(
            "Please cut the release branch from main ({wo}).",
            "Work order {wo}: create the release branch off main.",
            "Go ahead and cut the release branch off the main line ({wo}).",
        ),
        premature=(
            "Let's move on and cut the release branch from main now ({wo}).",
            "Work order {wo}: I'm eager to get the release branch cut today.",
            "Let's keep things rolling: create the release branch from main right away ({wo}).",
        ),
        redo_probes=(
            "Cut the release branch from main, please ({wo}).",
            "Work order {wo}: please create the release branch from main.",
            "Please handle cutting the release branch ({wo}).",
        ),
        status=(
            "What's the status of the release branch ({wo})?",
            "Work order {wo}: has the release branch been cut from main yet?",
            "Where are we with cutting the release branch ({wo})?",
        ),
        legit_redo=(
            "The branch was cut from a commit with a broken merge, so I am explicitly authorizing a redo: cut the release branch from main again ({wo}).",
            "Work order {wo}: the release branch was deleted by a misconfigured cleanup job, so please cut it again; this redo is explicitly authorized.",
            "Because a blocking fix only just landed on main, I explicitly authorize you to cut the release branch again ({wo}).",
        ),
    ),
    Template(
        slug="rel-version-bump",
        phase=1,
        text="bump the version number in the manifest",
        asks=(
            "Please bump the version number in the manifest ({wo}).",
            "Work order {wo}: increment the version number in the manifest.",
            "Go ahead and raise the version number in the manifest ({wo}).",
        ),
        premature=(
            "Let's move on and bump the version number in the manifest now ({wo}).",
            "Work order {wo}: I'd like the version number in the manifest bumped today.",
            "Let's not dawdle: increment the version number in the manifest right away ({wo}).",
        ),
        redo_probes=(
            "Bump the version number in the manifest, please ({wo}).",
            "Work order {wo}: please increment the version number in the manifest.",
            "Please take care of the version number in the manifest ({wo}).",
        ),
        status=(
            "What's the status of the version number bump ({wo})?",
            "Work order {wo}: has the version number in the manifest been bumped yet?",
            "Where do we stand on the version number in the manifest ({wo})?",
        ),
        legit_redo=(
            "We switched to date-based versioning, so I am explicitly authorizing a redo: bump the version number in the manifest again ({wo}).",
            "Work order {wo}: the version number was bumped in the wrong manifest file, so please bump it again; this redo is explicitly authorized.",
            "Because the hotfix consumed the number we used, I explicitly authorize you to increment the version number again ({wo}).",
        ),
    ),
    Template(
        slug="rel-build-candidate",
        phase=1,
        text="build the release candidate binaries",
        asks=(
            "Please build the release candidate binaries ({wo}).",
            "Work order {wo}: produce the release candidate binaries.",
            "Go ahead and compile the release candidate binaries ({wo}).",
        ),
        premature=(
            "Let's move on and build the release candidate binaries now ({wo}).",
            "Work order {wo}: I'm keen to have the release candidate binaries built today.",
            "Let's speed up: compile the release candidate binaries right away ({wo}).",
        ),
        redo_probes=(
            "Build the release candidate binaries, please ({wo}).",
            "Work order {wo}: please produce the release candidate binaries.",
            "Please handle the release candidate build ({wo}).",
        ),
        status=(
            "What's the status of the release candidate binaries ({wo})?",
            "Work order {wo}: have the release candidate binaries been built yet?",
            "Where are we with the release candidate build ({wo})?",
        ),
        legit_redo=(
            "The build cache was poisoned by a bad toolchain, so I am explicitly authorizing a redo: build the release candidate binaries again ({wo}).",
            "Work order {wo}: the release candidate binaries were built without optimizations, so please build them again; this redo is explicitly authorized.",
            "Because the compiler vendor shipped a miscompilation fix, I explicitly authorize you to build the release candidate binaries again ({wo}).",
        ),
    ),
    # Phase 2: test and regression.
    Template(
        slug="rel-regression-suite",
        phase=2,
        text="run the full regression suite",
        asks=(
            "Please run the full regression suite ({wo}).",
            "Work order {wo}: kick off the full regression suite.",
            "Go ahead and execute the full regression suite ({wo}).",
        ),
        premature=(
            "Let's move on and run the full regression suite now ({wo}).",
            "Work order {wo}: I'm eager to get the full regression suite going today.",
            "Let's keep the pace: start the full regression suite right away ({wo}).",
        ),
        redo_probes=(
            "Run the full regression suite, please ({wo}).",
            "Work order {wo}: please kick off the full regression suite.",
            "Please take care of the full regression suite ({wo}).",
        ),
        status=(
            "What's the status of the full regression suite ({wo})?",
            "Work order {wo}: has the full regression suite been run yet?",
            "Where do we stand on the regression suite ({wo})?",
        ),
        legit_redo=(
            "Half the runners crashed mid-run, so I am explicitly authorizing a redo: run the full regression suite again ({wo}).",
            "Work order {wo}: the regression suite ran against an old fixture set, so please run it again; this redo is explicitly authorized.",
            "Because a late fix touched the payment module, I explicitly authorize you to run the full regression suite again ({wo}).",
        ),
    ),
    Template(
        slug="rel-load-test",
        phase=2,
        text="run the load test on the staging cluster",
        asks=(
            "Please run the load test on the staging cluster ({wo}).",
            "Work order {wo}: put the staging cluster through the load test.",
            "Go ahead and execute the load test on the staging cluster ({wo}).",
        ),
        premature=(
            "Let's move on and run the load test on the staging cluster now ({wo}).",
            "Work order {wo}: I'd like the load test on the staging cluster done today.",
            "Let's push on: start the load test on the staging cluster right away ({wo}).",
        ),
        redo_probes=(
            "Run the load test on the staging cluster, please ({wo}).",
            "Work order {wo}: please execute the load test on the staging cluster.",
            "Please handle the load test on the staging cluster ({wo}).",
        ),
        status=(
            "What's the status of the load test on the staging cluster ({wo})?",
            "Work order {wo}: has the load test on the staging cluster been run yet?",
            "Where are we with the load test ({wo})?",
        ),
        legit_redo=(
            "The request generator was misconfigured at a tenth of peak, so I am explicitly authorizing a redo: run the load test on the staging cluster again ({wo}).",
            "Work order {wo}: the staging cluster was undersized during the load test, so please run it again; this redo is explicitly authorized.",
            "Because the caching layer changed, I explicitly authorize you to run the load test on the staging cluster again ({wo}).",
        ),
    ),
    Template(
        slug="rel-security-scan",
        phase=2,
        text="complete the security scan of the dependencies",
        asks=(
            "Please complete the security scan of the dependencies ({wo}).",
            "Work order {wo}: carry out the security scan of the dependencies.",
            "Go ahead and run the security scan over the dependencies ({wo}).",
        ),
        premature=(
            "Let's move on and complete the security scan of the dependencies now ({wo}).",
            "Work order {wo}: I'm keen to get the security scan of the dependencies finished today.",
            "Let's get going: run the security scan of the dependencies right away ({wo}).",
        ),
        redo_probes=(
            "Complete the security scan of the dependencies, please ({wo}).",
            "Work order {wo}: please run the security scan of the dependencies.",
            "Please take care of the security scan of our dependencies ({wo}).",
        ),
        status=(
            "What's the status of the security scan of the dependencies ({wo})?",
            "Work order {wo}: has the security scan of the dependencies been completed yet?",
            "Where do we stand on the security scan ({wo})?",
        ),
        legit_redo=(
            "A new advisory was published for our TLS library, so I am explicitly authorizing a redo: complete the security scan of the dependencies again ({wo}).",
            "Work order {wo}: the security scan used an outdated vulnerability feed, so please run it again; this redo is explicitly authorized.",
            "Because two dependencies were upgraded, I explicitly authorize you to run the security scan of the dependencies again ({wo}).",
        ),
    ),
    # Phase 3: sign and approve.
    Template(
        slug="rel-sign-artifacts",
        phase=3,
        text="sign the release artifacts",
        asks=(
            "Please sign the release artifacts ({wo}).",
            "Work order {wo}: apply our signing key to the release artifacts.",
            "Go ahead and get the release artifacts signed ({wo}).",
        ),
        premature=(
            "Let's move on and sign the release artifacts now ({wo}).",
            "Work order {wo}: I'm eager to have the release artifacts signed today.",
            "Let's wrap this stage up: sign the release artifacts right away ({wo}).",
        ),
        redo_probes=(
            "Sign the release artifacts, please ({wo}).",
            "Work order {wo}: please put our signatures on the release artifacts.",
            "Please take care of signing the release artifacts ({wo}).",
        ),
        status=(
            "What's the status of signing the release artifacts ({wo})?",
            "Work order {wo}: have the release artifacts been signed yet?",
            "Where are we with the release artifacts signatures ({wo})?",
        ),
        legit_redo=(
            "Our signing key was rotated after a suspected leak, so I am explicitly authorizing a redo: sign the release artifacts again ({wo}).",
            "Work order {wo}: the release artifacts were signed with the staging key, so please sign them again; this redo is explicitly authorized.",
            "Because the timestamp authority was down during signing, I explicitly authorize you to sign the release artifacts again ({wo}).",
        ),
    ),
    Template(
        slug="rel-cab-approval",
        phase=3,
        text="get approval from the change advisory board",
        asks=(
            "Please get approval from the change advisory board ({wo}).",
            "Work order {wo}: obtain the change advisory board's approval.",
            "Go ahead and take this to the change advisory board for approval ({wo}).",
        ),
        premature=(
            "Let's move on and get approval from the change advisory board now ({wo}).",
            "Work order {wo}: I'd like the change advisory board's approval secured today.",
            "Let's keep things moving: secure sign-off from the change advisory board right away ({wo}).",
        ),
        redo_probes=(
            "Get approval from the change advisory board, please ({wo}).",
            "Work order {wo}: please obtain the change advisory board's approval.",
            "Please handle the change advisory board approval ({wo}).",
        ),
        status=(
            "What's the status of the change advisory board approval ({wo})?",
            "Work order {wo}: has the change advisory board approved yet?",
            "Where do we stand with the change advisory board ({wo})?",
        ),
        legit_redo=(
            "The board's approval expired when the window slipped, so I am explicitly authorizing a redo: get approval from the change advisory board again ({wo}).",
            "Work order {wo}: the change advisory board approved an earlier rollback plan, so please get their approval again; this redo is explicitly authorized.",
            "Because the impact rating was raised to high, I explicitly authorize you to seek approval from the change advisory board again ({wo}).",
        ),
    ),
    Template(
        slug="rel-changelog",
        phase=3,
        text="finalize the changelog",
        asks=(
            "Please finalize the changelog ({wo}).",
            "Work order {wo}: wrap up the changelog.",
            "Go ahead and complete the changelog ({wo}).",
        ),
        premature=(
            "Let's move on and finalize the changelog now ({wo}).",
            "Work order {wo}: I'm keen to see the changelog finalized today.",
            "Let's get it done: polish off the changelog right away ({wo}).",
        ),
        redo_probes=(
            "Finalize the changelog, please ({wo}).",
            "Work order {wo}: please wrap up the changelog.",
            "Please take care of the changelog ({wo}).",
        ),
        status=(
            "What's the status of the changelog ({wo})?",
            "Work order {wo}: has the changelog been finalized yet?",
            "Where are we with finalizing the changelog ({wo})?",
        ),
        legit_redo=(
            "Two entries credited the wrong contributors, so I am explicitly authorizing a redo: finalize the changelog again ({wo}).",
            "Work order {wo}: the changelog missed the deprecation notices, so please finalize it again; this redo is explicitly authorized.",
            "Because legal asked for a licensing note, I explicitly authorize you to finalize the changelog again ({wo}).",
        ),
    ),
    # Phase 4: deploy and canary.
    Template(
        slug="rel-canary-rollout",
        phase=4,
        text="start the canary rollout",
        asks=(
            "Please start the canary rollout ({wo}).",
            "Work order {wo}: begin the canary rollout.",
            "Go ahead and kick off the canary rollout ({wo}).",
        ),
        premature=(
            "Let's move on and start the canary rollout now ({wo}).",
            "Work order {wo}: I'm eager to get the canary rollout going today.",
            "Let's ship it: begin the canary rollout right away ({wo}).",
        ),
        redo_probes=(
            "Start the canary rollout, please ({wo}).",
            "Work order {wo}: please begin the canary rollout.",
            "Please take care of the canary rollout ({wo}).",
        ),
        status=(
            "What's the status of the canary rollout ({wo})?",
            "Work order {wo}: has the canary rollout started yet?",
            "How is the canary rollout going ({wo})?",
        ),
        legit_redo=(
            "The canary hosts were pointed at the wrong config, so I am explicitly authorizing a redo: start the canary rollout again ({wo}).",
            "Work order {wo}: monitoring was offline during the canary rollout, so please start it again; this redo is explicitly authorized.",
            "Because the alert thresholds were fixed, I explicitly authorize you to start the canary rollout again ({wo}).",
        ),
    ),
    Template(
        slug="rel-db-migrations",
        phase=4,
        text="apply the database migrations",
        asks=(
            "Please apply the database migrations ({wo}).",
            "Work order {wo}: run the database migrations.",
            "Go ahead and execute the database migrations ({wo}).",
        ),
        premature=(
            "Let's move on and apply the database migrations now ({wo}).",
            "Work order {wo}: I'd like the database migrations applied today.",
            "Let's keep rolling: run the database migrations right away ({wo}).",
        ),
        redo_probes=(
            "Apply the database migrations, please ({wo}).",
            "Work order {wo}: please run the database migrations.",
            "Please handle the database migrations ({wo}).",
        ),
        status=(
            "What's the status of the database migrations ({wo})?",
            "Work order {wo}: have the database migrations been applied yet?",
            "Where do we stand on the database migrations ({wo})?",
        ),
        legit_redo=(
            "The migration job was rolled back by the failover, so I am explicitly authorizing a redo: apply the database migrations again ({wo}).",
            "Work order {wo}: the database migrations ran against a read replica, so please apply them again; this redo is explicitly authorized.",
            "Because the schema script was amended, I explicitly authorize you to apply the database migrations again ({wo}).",
        ),
    ),
    Template(
        slug="rel-feature-flags",
        phase=4,
        text="turn on the feature flags",
        asks=(
            "Please turn on the feature flags ({wo}).",
            "Work order {wo}: enable the feature flags.",
            "Go ahead and switch on the feature flags ({wo}).",
        ),
        premature=(
            "Let's move on and turn on the feature flags now ({wo}).",
            "Work order {wo}: I'm keen to have the feature flags enabled today.",
            "Let's light it up: switch the feature flags on right away ({wo}).",
        ),
        redo_probes=(
            "Turn on the feature flags, please ({wo}).",
            "Work order {wo}: please enable the feature flags.",
            "Please take care of the feature flags ({wo}).",
        ),
        status=(
            "What's the status of the feature flags ({wo})?",
            "Work order {wo}: have the feature flags been turned on yet?",
            "Where are we with enabling the feature flags ({wo})?",
        ),
        legit_redo=(
            "The flag service lost its state in the outage, so I am explicitly authorizing a redo: turn on the feature flags again ({wo}).",
            "Work order {wo}: the feature flags were enabled for the wrong tenant, so please turn them on again; this redo is explicitly authorized.",
            "Because the targeting rules changed, I explicitly authorize you to enable the feature flags again ({wo}).",
        ),
    ),
    # Phase 5: rollout, announce and retro.
    Template(
        slug="rel-full-traffic",
        phase=5,
        text="ramp production traffic to all users",
        asks=(
            "Please ramp production traffic to all users ({wo}).",
            "Work order {wo}: open production traffic up to all users.",
            "Go ahead and scale production traffic up to every user ({wo}).",
        ),
        premature=(
            "Let's move on and ramp production traffic to all users now ({wo}).",
            "Work order {wo}: I'm eager to get production traffic ramped to all users today.",
            "Let's go big: ramp production traffic to every user right away ({wo}).",
        ),
        redo_probes=(
            "Ramp production traffic to all users, please ({wo}).",
            "Work order {wo}: please open production traffic up to all users.",
            "Please take care of ramping production traffic ({wo}).",
        ),
        status=(
            "What's the status of the production traffic ramp ({wo})?",
            "Work order {wo}: has production traffic been ramped to all users yet?",
            "Where do we stand on production traffic for all users ({wo})?",
        ),
        legit_redo=(
            "An automatic rollback pulled everyone onto the previous deployment, so I am explicitly authorizing a redo: ramp production traffic to all users again ({wo}).",
            "Work order {wo}: the load balancer ignored the ramp, so please ramp production traffic again; this redo is explicitly authorized.",
            "Because the regional outage drained half the fleet, I explicitly authorize you to ramp production traffic to all users again ({wo}).",
        ),
    ),
    Template(
        slug="rel-launch-announcement",
        phase=5,
        text="send the launch announcement to customers",
        asks=(
            "Please send the launch announcement to customers ({wo}).",
            "Work order {wo}: publish the launch announcement for customers.",
            "Go ahead and get the launch announcement out to customers ({wo}).",
        ),
        premature=(
            "Let's move on and send the launch announcement to customers now ({wo}).",
            "Work order {wo}: I'm keen to get the launch announcement to customers today.",
            "Let's make some noise: send customers the launch announcement right away ({wo}).",
        ),
        redo_probes=(
            "Send the launch announcement to customers, please ({wo}).",
            "Work order {wo}: please get the launch announcement out to customers.",
            "Please handle the launch announcement to customers ({wo}).",
        ),
        status=(
            "What's the status of the launch announcement ({wo})?",
            "Work order {wo}: has the launch announcement gone out to customers yet?",
            "Where are we with the customer launch announcement ({wo})?",
        ),
        legit_redo=(
            "The announcement linked to a dead download page, so I am explicitly authorizing a redo: send the launch announcement to customers again ({wo}).",
            "Work order {wo}: the launch announcement went only to the beta list, so please send it again; this redo is explicitly authorized.",
            "Because marketing corrected the pricing table, I explicitly authorize you to send the launch announcement to customers again ({wo}).",
        ),
    ),
    Template(
        slug="rel-retrospective",
        phase=5,
        text="hold the release retrospective",
        asks=(
            "Please hold the release retrospective ({wo}).",
            "Work order {wo}: run the release retrospective.",
            "Go ahead and organize the release retrospective ({wo}).",
        ),
        premature=(
            "Let's move on and hold the release retrospective now ({wo}).",
            "Work order {wo}: I'm eager to hold the release retrospective today.",
            "Let's close the loop: hold the release retrospective right away ({wo}).",
        ),
        redo_probes=(
            "Hold the release retrospective, please ({wo}).",
            "Work order {wo}: please run the release retrospective.",
            "Please take care of the release retrospective ({wo}).",
        ),
        status=(
            "What's the status of the release retrospective ({wo})?",
            "Work order {wo}: has the release retrospective been held yet?",
            "Where do we stand on the release retrospective ({wo})?",
        ),
        legit_redo=(
            "Half the attendees missed it because of the outage, so I am explicitly authorizing a redo: hold the release retrospective again ({wo}).",
            "Work order {wo}: the release retrospective notes were never captured, so please hold it again; this redo is explicitly authorized.",
            "Because the incident review changed the findings, I explicitly authorize you to hold the release retrospective again ({wo}).",
        ),
    ),
)

RELEASE = DomainPool(
    name="release",
    templates=_RELEASE_TEMPLATES,
    fillers=(
        "Thanks, that's really useful.",
        "Quick heads-up: I have a dentist appointment at three.",
        "Morning! The stand-up ran a little long today.",
        "Appreciate you keeping an eye on things.",
        "Sorry, I was pulled into another thread for a bit.",
        "Pizza is arriving for the whole floor at noon.",
        "No action needed, just saying hi.",
        "My laptop is installing patches, give me a minute.",
        "Nice, that matches what I expected.",
        "FYI, I'll be offline Thursday morning.",
        "Thanks for bearing with me today.",
        "It's raining heavily here, hope it's nicer on your side.",
        "Heading to lunch, talk soon.",
        "All good on my end for now.",
        "Happy Friday!",
        "Give me a second to find my notes.",
        "That's clear, thank you.",
        "The new interns join next week, exciting times.",
        "My video froze for a moment, sorry about that.",
        "Cheers, appreciate the help.",
        "I'm juggling a few meetings, so replies may lag.",
        "Remind me later to grab a whiteboard marker, ha.",
        "Okay, noted.",
        "Hope you had a relaxing weekend.",
    ),
    re_asks=(
        "Following up on the earlier request: please {text} now ({wo}).",
        "Circling back on this one: please {text} ({wo}).",
        "As mentioned earlier, please {text} ({wo}).",
    ),
    ambiguous=(
        "Could you take care of one of the open items, either {a} or {b} ({wo})?",
        "Work order {wo}: please do one of these two, {a} or {b}.",
        "Please handle one of the pending items, {a} or {b} ({wo}).",
    ),
)

POOLS: dict[str, DomainPool] = {"procurement": PROCUREMENT, "release": RELEASE}

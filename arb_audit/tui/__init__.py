"""The reviewer's desk (Textual): ``arb-audit review``. Nothing else imports it."""
